#include "model/layer_cost.h"

#include "model/op_unit.h"

namespace splitbrain::model {

LayerCost compute_layer_cost(const Layer& layer, std::span<const Layer* const> producers) {
  LayerCost cost;
  op_unit(layer.kind).cost(layer, producers, cost);
  if (!layer.needs_input_gradient) cost.backward_input_flops = 0;
  return cost;
}

}  // namespace splitbrain::model
