// add: the elementwise sum of two or more inputs of one shape (a residual connection).

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  for (const Layer* producer : producers) {
    require_values(site, *producer);
    if (producer->output_shape != producers[0]->output_shape) {
      site.fail("inputs", fmt::format("all inputs must have one shape, but '{}' is {} and '{}' is {}",
                                      producers[0]->name, shape_to_string(producers[0]->output_shape), producer->name,
                                      shape_to_string(producer->output_shape)));
    }
  }
  layer.output_shape = producers[0]->output_shape;
}

// The gradient passes through unchanged: no backward FLOPs.
void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  cost.forward_flops = static_cast<double>(producers.size() - 1) * elements(layer.output_shape);
}

}  // namespace

const OpUnit add_unit = {
    .kind = OpKind::add,
    .name = "add",
    .min_inputs = 2,
    .max_inputs = -1,
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
