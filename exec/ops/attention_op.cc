// Self-attention on the local block, multi-head or grouped-query, with optional rotary
// positions. The rules allow the batch, `out` (the heads, whole key/value groups at a time: the
// fused q|k|v features are group-major, so this rank's contiguous block of them is whole groups,
// and attention never mixes groups or samples) and `spatial` (context parallelism: the input
// comes whole over the sequence, the output holds this rank's block of positions, so the kernel
// runs those queries, at their global positions, against every key; its input gradient is this
// rank's share, summed over the split by the redistribution after it). What it keeps for
// backward (the probabilities, or with fused each score row's log-sum-exp) is sized by
// model/attention_kept.h, as the memory walk sizes it.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <utility>

#include "exec/kernels/attention.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "model/attention_kept.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {
namespace {

class SelfAttentionOp final : public LayerOp {
 public:
  SelfAttentionOp(std::unique_ptr<kernels::SelfAttentionKernel> kernel, int64_t kept_bytes,
                  int64_t kept_model_type_elements, kernels::KernelFactory& factory)
      : kernel_(std::move(kernel)),
        kept_bytes_(kept_bytes),
        kept_model_type_elements_(kept_model_type_elements),
        kept_(factory) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    kernel_->forward(inputs[0].data(), output.data(), kept_.keep(micro, kept_bytes_).as<float>());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    kernel_->backward(inputs[0].data(), kept_.at(micro).as<float>(), output_grad.data(), input_grads[0].data());
  }

  void release(int micro) override { kept_.release(micro); }
  int64_t kept_bytes() const override { return kept_.bytes(); }
  int64_t kept_model_type_elements() const override {
    return kept_bytes_ > 0 ? kept_.bytes() / kept_bytes_ * kept_model_type_elements_ : 0;
  }

 private:
  std::unique_ptr<kernels::SelfAttentionKernel> kernel_;
  int64_t kept_bytes_;                // per micro-batch
  int64_t kept_model_type_elements_;  // per micro-batch: of those, elements the model counts in its dtype
  KeptPerMicroBatch kept_;            // the probabilities, or the row statistics
};

}  // namespace

std::unique_ptr<LayerOp> make_self_attention_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::SelfAttentionAttrs>();
  if (a.dropout > 0.0) {
    throw InputError(
        fmt::format("layer '{}': dropout on the attention probabilities ({}) is not supported by the "
                    "executor yet (the simulator prices it)",
                    layer.name, a.dropout));
  }
  const auto& x = op.input_shapes[0];  // [N, T, (heads + 2 kv_heads) * head_dim] local
  const int64_t global_width = op.output_global_shape.back();
  const int64_t local_width = op.output_shape.back();
  const int64_t head_dim = global_width / a.heads;
  const int64_t group = a.heads / a.kv_head_count();  // query heads per key/value head
  const int64_t local_heads = local_width / head_dim;
  if (x.size() != 3 || op.output_global_shape[1] != x[1] || op.output_shape.size() != 3 ||
      local_width % head_dim != 0 || local_heads % group != 0 ||
      x[2] != (local_heads + 2 * (local_heads / group)) * head_dim) {
    throw std::logic_error(
        fmt::format("layer '{}': local input [{}] does not hold whole groups of {} heads of width {}", layer.name,
                    fmt::join(x, ", "), group, head_dim));
  }
  kernels::AttentionShape shape;
  shape.batch = x[0];
  shape.seq = x[1];
  shape.heads = local_heads;
  shape.head_dim = head_dim;
  shape.causal = a.causal;
  shape.kv_heads = local_heads / group;
  shape.rope_theta = a.rope_theta;
  shape.fused = a.fused;
  if (op.output_shape[1] != x[1]) {  // this rank's block of the queries
    shape.queries = op.output_shape[1];
    shape.query_start = op.output_offset.at(1);
  }
  // The model unit's count for this rank's heads and queries, in the executor's fp32.
  model::SelfAttentionAttrs local = a;
  local.heads = local_heads;
  const model::AttentionKept kept = model::attention_kept_per_sample(local, shape.seq, shape.query_rows());
  const int64_t kept_bytes = shape.batch * (kept.elements * static_cast<int64_t>(sizeof(float)) + kept.bytes);
  auto kernel = factory.make_self_attention(shape);
  if (kept_bytes != kernel->kept_elements() * static_cast<int64_t>(sizeof(float))) {
    throw std::logic_error(fmt::format("layer '{}': the kernel keeps {} floats, the model counts {} bytes", layer.name,
                                       kernel->kept_elements(), kept_bytes));
  }
  return std::make_unique<SelfAttentionOp>(std::move(kernel), kept_bytes, shape.batch * kept.elements, factory);
}

}  // namespace splitbrain::exec::ops
