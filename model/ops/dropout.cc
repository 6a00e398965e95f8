// dropout: zeroes each element with `probability` and scales the rest (mask-and-scale).

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

constexpr double kDropoutForward = 1, kDropoutBackward = 1;  // FLOPs per element
constexpr int64_t kDropoutMaskBytes = 1;                     // one byte per element

OpAttrs read(JsonObjectReader& fields) { return DropoutAttrs{fields.optional_number("probability", 0.5)}; }

void write(const OpAttrs& attrs, nlohmann::json& out) {
  out["probability"] = std::get<DropoutAttrs>(attrs).probability;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const double p = layer.attr<DropoutAttrs>().probability;
  if (!(p >= 0.0 && p < 1.0)) site.fail("probability", fmt::format("must be in [0, 1), got {}", p));
  infer_same_shape(layer, producers, site);
}

void cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  elementwise_flops(cost, elements(layer.output_shape), kDropoutForward, kDropoutBackward);
  cost.saved.extra_bytes = checked_product(num_elements(layer.output_shape), kDropoutMaskBytes, "bytes");
}

}  // namespace

const OpUnit dropout_unit = {
    .kind = OpKind::dropout,
    .name = "dropout",
    .default_attrs = []() -> OpAttrs { return DropoutAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
