// linear: y = x W^T + b over the last dimension; `tied_to` an embedding, the weight is its table.

#include <fmt/format.h>

#include <cmath>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) {
  LinearAttrs a;
  a.in_features = fields.optional_int("in_features", 0);
  a.out_features = fields.required_int("out_features");
  a.bias = fields.optional_bool("bias", true);
  a.tied_to = fields.optional_string("tied_to", "");
  if (fields.has("in_features") && a.in_features <= 0) fields.fail("in_features", "must be positive");
  return a;
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<LinearAttrs>(attrs);
  out["in_features"] = a.in_features;
  out["out_features"] = a.out_features;
  out["bias"] = a.bias;
  if (!a.tied_to.empty()) out["tied_to"] = a.tied_to;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  auto& a = std::get<LinearAttrs>(layer.attrs);
  require_values(site, *producers[0]);
  const Shape& in = producers[0]->output_shape;
  require_positive(site, "out_features", a.out_features);
  if (a.in_features == 0) a.in_features = in.back();
  if (a.in_features != in.back()) {
    site.fail("in_features", fmt::format("is {} but the input '{}' has {} features (shape {}; flatten first?)",
                                         a.in_features, producers[0]->name, in.back(), shape_to_string(in)));
  }
  layer.output_shape = in;
  layer.output_shape.back() = a.out_features;
}

void cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  const auto& a = layer.attr<LinearAttrs>();
  const int64_t weights = a.tied_to.empty() ? checked_product(a.in_features, a.out_features, "parameters") : 0;
  cost.params = weights + (a.bias ? a.out_features : 0);
  const double out = elements(layer.output_shape);
  product_flops(cost, out * static_cast<double>(a.in_features), a.bias ? out : 0.0);
  cost.saved.inputs = {0};
}

// PyTorch's default: weight and bias uniform in +-1/sqrt(in_features).
ParameterInit init(const Layer& layer, int) {
  return {.uniform_bound = 1.0 / std::sqrt(static_cast<double>(layer.attr<LinearAttrs>().in_features))};
}

}  // namespace

const OpUnit linear_unit = {
    .kind = OpKind::linear,
    .name = "linear",
    .default_attrs = []() -> OpAttrs { return LinearAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .arithmetic = ArithmeticPattern::matrix_product,
    .input_gradient_reads_saved = false,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
