// swiglu (the gated feed-forward unit of Llama, Shazeer's SwiGLU): y = silu(gate) * up with
// silu(g) = g * sigmoid(g), elementwise over two inputs of one shape, the outputs of the MLP's
// gate and up projections. No parameters: the projections are ordinary linear layers.

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

// Per element, counting exp and a division as one FLOP each. Forward: sigmoid(g) = 1 / (1 +
// exp(-g)) is 3, times g is 1, times up is 1: 5. Backward recomputes sigmoid s (3) and silu = g s
// (1), gives d_up = dy silu (1), silu'(g) = s (1 + g (1 - s)) (4) and d_gate = dy up silu' (2):
// 11.
constexpr double kForwardPerElement = 5, kInputGradientPerElement = 11;

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const Layer& gate = *producers[0];
  const Layer& up = *producers[1];
  require_values(site, gate);
  require_values(site, up);
  if (gate.output_shape != up.output_shape) {
    site.fail("inputs",
              fmt::format("the gate '{}' is {} but the up projection '{}' is {}; both must have one shape", gate.name,
                          shape_to_string(gate.output_shape), up.name, shape_to_string(up.output_shape)));
  }
  layer.output_shape = gate.output_shape;
}

void cost(const Layer& layer, std::span<const Layer* const>, LayerCost& out) {
  elementwise_flops(out, elements(layer.output_shape), kForwardPerElement, kInputGradientPerElement);
  // Backward reads both inputs (recomputing silu from the gate), not the output.
  out.saved.inputs = {0, 1};
}

}  // namespace

const OpUnit swiglu_unit = {
    .kind = OpKind::swiglu,
    .name = "swiglu",
    .min_inputs = 2,
    .max_inputs = 2,
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
