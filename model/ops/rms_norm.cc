// rms_norm (Llama's RMSNorm, torch.nn.RMSNorm): y = x / sqrt(mean(x^2) + eps) * weight over the
// last dimension, with a learned scale of that size and no shift.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

// Per element: forward squares and sums x, then scales it by the row's 1/rms and by the weight;
// the input gradient forms g = dy w, sums g x, and gives r g - x r^3 mean(g x); the weight
// gradient sums dy x r down the rows. The per-row square root is left out, as layernorm's is.
constexpr double kForwardPerElement = 4, kInputGradientPerElement = 6, kWeightGradientPerElement = 3;
constexpr int64_t kInverseRmsBytes = 4;  // 1/rms of each position, kept in fp32 for backward

OpAttrs read(JsonObjectReader& fields) { return RmsNormAttrs{fields.optional_number("eps", 1e-5)}; }

void write(const OpAttrs& attrs, nlohmann::json& out) { out["eps"] = std::get<RmsNormAttrs>(attrs).epsilon; }

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  if (!(layer.attr<RmsNormAttrs>().epsilon > 0.0)) site.fail("eps", "must be positive");
  infer_same_shape(layer, producers, site);
}

void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& out) {
  const Shape& in_shape = producers[0]->output_shape;
  const int64_t features = in_shape.back();
  const int64_t positions = num_elements(in_shape) / features;
  const double count = elements(layer.output_shape);
  out.params = features;
  elementwise_flops(out, count, kForwardPerElement, kInputGradientPerElement);
  out.backward_weight_flops = kWeightGradientPerElement * count;
  // Backward reads x and each position's 1/rms (not y: the weight gradient needs x r).
  out.saved.inputs = {0};
  out.saved.extra_bytes = positions * kInverseRmsBytes;
}

// The scale starts at 1 (torch.nn.RMSNorm's ones), so the layer starts as a pure normalisation.
ParameterInit init(const Layer&, int) { return {.constant = 1.0}; }

}  // namespace

const OpUnit rms_norm_unit = {
    .kind = OpKind::rms_norm,
    .name = "rms_norm",
    .default_attrs = []() -> OpAttrs { return RmsNormAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
