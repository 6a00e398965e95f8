// batchnorm (each channel, dimension 0, over batch and space) and layernorm (the last
// dimension), both with a learned scale and shift.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

constexpr double kNormForward = 8, kNormBackward = 12;  // statistics, normalise, scale, shift
constexpr int64_t kStatisticBytes = 4;                  // mean and inverse deviation are kept in fp32

OpAttrs read(JsonObjectReader& fields) { return NormAttrs{fields.optional_number("epsilon", 1e-5)}; }

void write(const OpAttrs& attrs, nlohmann::json& out) { out["epsilon"] = std::get<NormAttrs>(attrs).epsilon; }

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  if (!(layer.attr<NormAttrs>().epsilon > 0.0)) site.fail("epsilon", "must be positive");
  infer_same_shape(layer, producers, site);
}

// batchnorm: per-channel statistics (dimension 0); layernorm: per position (all but the last).
void norm_cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost, bool per_channel) {
  const Shape& in_shape = producers[0]->output_shape;
  const int64_t features = per_channel ? in_shape.front() : in_shape.back();
  const int64_t statistics = per_channel ? features : num_elements(in_shape) / features;
  const double out = elements(layer.output_shape);
  cost.params = checked_product(2, features, "parameters");
  elementwise_flops(cost, out, kNormForward, kNormBackward);
  cost.backward_weight_flops = 2 * out;
  cost.saved.inputs = {0};
  // Batchnorm's per-channel statistics are shared by the batch; counted per sample they are
  // negligible, so only layernorm's per-position statistics are kept here.
  cost.saved.extra_bytes = per_channel ? 0 : 2 * statistics * kStatisticBytes;
}

void batchnorm_cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  norm_cost(layer, producers, cost, true);
}

void layernorm_cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  norm_cost(layer, producers, cost, false);
}

// The scale starts at 1, the shift at 0.
ParameterInit init(const Layer&, int parameter) { return {.constant = parameter == 0 ? 1.0 : 0.0}; }

}  // namespace

const OpUnit batchnorm_unit = {
    .kind = OpKind::batchnorm,
    .name = "batchnorm",
    .default_attrs = []() -> OpAttrs { return NormAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = batchnorm_cost,
    .parameter_init = init,
};

const OpUnit layernorm_unit = {
    .kind = OpKind::layernorm,
    .name = "layernorm",
    .default_attrs = []() -> OpAttrs { return NormAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = layernorm_cost,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
