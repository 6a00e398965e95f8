#include "model/layer_cost.h"

#include <stdexcept>

#include "model/max_pool_index.h"

namespace splitbrain::model {
namespace {

// FLOPs per element for ops that are not matrix products. Rough operation counts; these ops
// are bandwidth-bound, so the cost model leans on their bytes, not on these numbers.
constexpr double kReluForward = 1, kReluBackward = 1;
constexpr double kGeluForward = 8, kGeluBackward = 12;       // tanh form: a few mul/add + tanh
constexpr double kDropoutForward = 1, kDropoutBackward = 1;  // mask-and-scale
constexpr double kNormForward = 8, kNormBackward = 12;       // statistics, normalise, scale, shift
constexpr double kSoftmaxForward = 5, kSoftmaxBackward = 4;  // max, subtract, exp, sum, divide
constexpr double kCrossEntropyBackward = 2;                  // softmax minus one-hot, scaled

constexpr int64_t kDropoutMaskBytes = 1;  // one byte per element
constexpr int64_t kLabelBytes = 4;        // the target class of a row: a sample, or a position of a sequence (int32)
constexpr int64_t kStatisticBytes = 4;    // mean and inverse deviation are kept in fp32

double elements(const Shape& shape) { return static_cast<double>(num_elements(shape)); }

// Sets the FLOPs of a product with `macs` multiply-adds and an optional bias on `outputs`.
void product_flops(LayerCost& cost, double macs, double bias_outputs) {
  cost.forward_flops = 2 * macs + bias_outputs;
  cost.backward_input_flops = 2 * macs;
  cost.backward_weight_flops = 2 * macs + bias_outputs;
}

void elementwise_flops(LayerCost& cost, double count, double forward_per_element, double backward_per_element) {
  cost.forward_flops = forward_per_element * count;
  cost.backward_input_flops = backward_per_element * count;
}

}  // namespace

LayerCost compute_layer_cost(const Layer& layer, std::span<const Layer* const> producers) {
  LayerCost cost;
  const double out = elements(layer.output_shape);
  const Shape in_shape = producers.empty() ? Shape{} : producers[0]->output_shape;
  const double in = producers.empty() ? 0.0 : elements(in_shape);

  switch (layer.kind) {
    case OpKind::input:
      break;
    case OpKind::conv2d: {
      const auto& a = layer.attr<Conv2dAttrs>();
      const int64_t weights_per_output =
          checked_product(checked_product(in_shape[0] / a.groups, a.kernel.h, "weights"), a.kernel.w, "weights");
      cost.params = checked_product(a.out_channels, weights_per_output, "parameters") + (a.bias ? a.out_channels : 0);
      product_flops(cost, out * static_cast<double>(weights_per_output), a.bias ? out : 0.0);
      cost.saved.inputs = {0};
      break;
    }
    case OpKind::linear: {
      const auto& a = layer.attr<LinearAttrs>();
      const int64_t weights = a.tied_to.empty() ? checked_product(a.in_features, a.out_features, "parameters") : 0;
      cost.params = weights + (a.bias ? a.out_features : 0);
      product_flops(cost, out * static_cast<double>(a.in_features), a.bias ? out : 0.0);
      cost.saved.inputs = {0};
      break;
    }
    case OpKind::maxpool: {
      const auto& a = layer.attr<Pool2dAttrs>();
      elementwise_flops(cost, out, static_cast<double>(a.kernel.h * a.kernel.w), 1);
      cost.saved.extra_bytes =
          checked_product(num_elements(layer.output_shape), max_pool_index_bytes(a.kernel.h * a.kernel.w), "bytes");
      break;
    }
    case OpKind::avgpool: {
      const auto& a = layer.attr<Pool2dAttrs>();
      const double window = static_cast<double>(a.kernel.h * a.kernel.w);
      elementwise_flops(cost, out, window, window);
      break;
    }
    case OpKind::adaptive_avgpool:
      // Every input element is summed into one output (windows of equal-sized bins), then divided.
      cost.forward_flops = in + out;
      cost.backward_input_flops = in;
      break;
    case OpKind::relu:
      elementwise_flops(cost, out, kReluForward, kReluBackward);
      cost.saved.output = true;  // relu's gradient is read from its output, so it may run in place
      break;
    case OpKind::gelu:
      elementwise_flops(cost, out, kGeluForward, kGeluBackward);
      cost.saved.inputs = {0};
      break;
    case OpKind::dropout:
      elementwise_flops(cost, out, kDropoutForward, kDropoutBackward);
      cost.saved.extra_bytes = checked_product(num_elements(layer.output_shape), kDropoutMaskBytes, "bytes");
      break;
    case OpKind::flatten:
      break;  // a view
    case OpKind::batchnorm:
    case OpKind::layernorm: {
      // batchnorm: per-channel statistics (dimension 0); layernorm: per position (all but the last).
      const bool per_channel = layer.kind == OpKind::batchnorm;
      const int64_t features = per_channel ? in_shape.front() : in_shape.back();
      const int64_t statistics = per_channel ? features : num_elements(in_shape) / features;
      cost.params = checked_product(2, features, "parameters");
      elementwise_flops(cost, out, kNormForward, kNormBackward);
      cost.backward_weight_flops = 2 * out;
      cost.saved.inputs = {0};
      // Batchnorm's per-channel statistics are shared by the batch; counted per sample they are
      // negligible, so only layernorm's per-position statistics are kept here.
      cost.saved.extra_bytes = per_channel ? 0 : 2 * statistics * kStatisticBytes;
      break;
    }
    case OpKind::add:
      cost.forward_flops = static_cast<double>(producers.size() - 1) * out;
      break;  // the gradient passes through unchanged
    case OpKind::concat:
      break;
    case OpKind::embedding: {
      const auto& a = layer.attr<EmbeddingAttrs>();
      cost.params = checked_product(a.num_embeddings, a.embedding_dim, "parameters");
      cost.backward_weight_flops = out;  // scatter-add of the output gradient into the table
      cost.saved.inputs = {0};           // the token ids
      break;
    }
    case OpKind::matmul: {
      const Shape& lhs = producers[0]->output_shape;
      product_flops(cost, out * static_cast<double>(lhs.back()), 0.0);
      cost.backward_input_flops = 2 * cost.forward_flops;  // gradients of both operands
      cost.backward_weight_flops = 0;
      cost.saved.inputs = {0, 1};
      break;
    }
    case OpKind::self_attention: {
      const auto& a = layer.attr<SelfAttentionAttrs>();
      const double tokens = static_cast<double>(in_shape[0]);
      const double hidden = static_cast<double>(in_shape[1] / 3);
      const double scores = static_cast<double>(a.heads) * tokens * tokens;
      const double matmul_macs = 2 * tokens * tokens * hidden;  // Q K^T and P V, all heads
      // Causal masking is counted as full matrices: that is what dense kernels compute.
      cost.forward_flops = 2 * matmul_macs + (kSoftmaxForward + 1) * scores;  // +1: the 1/sqrt(d) scale
      cost.backward_input_flops = 4 * matmul_macs + kSoftmaxBackward * scores;
      cost.saved.inputs = {0};
      cost.saved.extra_elements = static_cast<int64_t>(scores);  // the attention probabilities
      if (a.dropout > 0.0) {
        // Dropout on them keeps the dropped probabilities and a one-byte mask too.
        cost.forward_flops += scores;
        cost.backward_input_flops += scores;
        cost.saved.extra_elements += static_cast<int64_t>(scores);
        cost.saved.extra_bytes += static_cast<int64_t>(scores);
      }
      break;
    }
    case OpKind::softmax_cross_entropy:
      cost.forward_flops = (kSoftmaxForward + 1) * in;  // +1: the log-likelihood pick and sum
      cost.backward_input_flops = kCrossEntropyBackward * in;
      cost.saved.extra_elements = num_elements(in_shape);                                 // the softmax probabilities
      cost.saved.extra_bytes = kLabelBytes * (num_elements(in_shape) / in_shape.back());  // a label per row
      break;
  }
  if (!layer.needs_input_gradient) cost.backward_input_flops = 0;
  return cost;
}

}  // namespace splitbrain::model
