// concat: joins two or more inputs along a per-sample dimension (0 = channels for images).

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) { return ConcatAttrs{fields.optional_int("axis", 0)}; }

void write(const OpAttrs& attrs, nlohmann::json& out) { out["axis"] = std::get<ConcatAttrs>(attrs).axis; }

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<ConcatAttrs>();
  const Shape& first = producers[0]->output_shape;
  const auto rank = static_cast<int64_t>(first.size());
  if (a.axis < 0 || a.axis >= rank)
    site.fail("axis", fmt::format("must be in [0, {}) for inputs of rank {}", rank, rank));
  Shape out = first;
  out[static_cast<size_t>(a.axis)] = 0;
  for (const Layer* producer : producers) {
    require_values(site, *producer);
    Shape other = producer->output_shape;
    bool fits = other.size() == first.size();
    for (size_t d = 0; fits && d < other.size(); ++d) fits = d == static_cast<size_t>(a.axis) || other[d] == first[d];
    if (!fits) {
      site.fail("inputs", fmt::format("'{}' is {} and '{}' is {}: they differ outside axis {}", producers[0]->name,
                                      shape_to_string(first), producer->name, shape_to_string(other), a.axis));
    }
    out[static_cast<size_t>(a.axis)] += other[static_cast<size_t>(a.axis)];
  }
  layer.output_shape = out;
}

void cost(const Layer&, std::span<const Layer* const>, LayerCost&) {}  // copies, no arithmetic

}  // namespace

const OpUnit concat_unit = {
    .kind = OpKind::concat,
    .name = "concat",
    .min_inputs = 2,
    .max_inputs = -1,
    .default_attrs = []() -> OpAttrs { return ConcatAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
