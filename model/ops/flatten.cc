// flatten: a view of the input as one dimension per sample.

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  require_values(site, *producers[0]);
  layer.output_shape = {num_elements(producers[0]->output_shape)};
}

void cost(const Layer&, std::span<const Layer* const>, LayerCost&) {}  // a view

}  // namespace

const OpUnit flatten_unit = {
    .kind = OpKind::flatten,
    .name = "flatten",
    .default_attrs = no_attrs,
    .read_attrs = read_no_attrs,
    .write_attrs = write_no_attrs,
    .infer_shape = infer,
    .cost = cost,
};

}  // namespace splitbrain::model::ops
