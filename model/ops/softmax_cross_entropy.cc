// softmax_cross_entropy: the loss of a sample from its logits [..., classes] (averaged over the
// positions of a sequence), [1] per sample.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

constexpr double kSoftmaxForward = 5;        // max, subtract, exp, sum, divide
constexpr double kCrossEntropyBackward = 2;  // softmax minus one-hot, scaled
constexpr int64_t kLabelBytes = 4;           // the target class of a row: a sample or a position (int32)

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  require_values(site, *producers[0]);
  layer.output_shape = {1};
}

void cost(const Layer&, std::span<const Layer* const> producers, LayerCost& cost) {
  const Shape& in_shape = producers[0]->output_shape;
  const double in = elements(in_shape);
  cost.forward_flops = (kSoftmaxForward + 1) * in;  // +1: the log-likelihood pick and sum
  cost.backward_input_flops = kCrossEntropyBackward * in;
  cost.saved.extra_elements = num_elements(in_shape);                                 // the softmax probabilities
  cost.saved.extra_bytes = kLabelBytes * (num_elements(in_shape) / in_shape.back());  // a label per row
}

}  // namespace

const OpUnit softmax_cross_entropy_unit = {
    .kind = OpKind::softmax_cross_entropy,
    .name = "softmax_cross_entropy",
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
