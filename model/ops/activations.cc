// relu and gelu: elementwise activations without attributes.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

// FLOPs per element: rough operation counts; these ops are bandwidth-bound, so the cost model
// leans on their bytes, not on these numbers.
constexpr double kReluForward = 1, kReluBackward = 1;
constexpr double kGeluForward = 8, kGeluBackward = 12;  // tanh form: a few mul/add + tanh

void relu_cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  elementwise_flops(cost, elements(layer.output_shape), kReluForward, kReluBackward);
  cost.saved.output = true;  // relu's gradient is read from its output, so it may run in place
}

void gelu_cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  elementwise_flops(cost, elements(layer.output_shape), kGeluForward, kGeluBackward);
  cost.saved.inputs = {0};
}

}  // namespace

const OpUnit relu_unit = {
    .kind = OpKind::relu,
    .name = "relu",
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer_same_shape,
    .cost = relu_cost,
};

const OpUnit gelu_unit = {
    .kind = OpKind::gelu,
    .name = "gelu",
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer_same_shape,
    .cost = gelu_cost,
};

}  // namespace splitbrain::model::ops
