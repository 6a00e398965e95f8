#include "exec/runtime/tied_parameters.h"

#include "plans/tensor_layout.h"
#include "plans/tied_weights.h"

namespace splitbrain::exec {

ParameterViews parameter_views(DeviceMemory& device, const plans::Plan& plan, const plans::CompiledPlan& compiled,
                               int rank, std::vector<LayerParameters>& parameters, int layer) {
  ParameterViews views;
  // A head on another stage than its table holds a copy of it as its own parameter. Under ZeRO 3
  // the table's parameters are the whole block the program gathered for this pass, bound there
  // while it lives (BufferTable).
  const int table = plans::shared_tied_table(plan, compiled, layer);
  if (table >= 0) {
    LayerParameters& owner = parameters[static_cast<size_t>(table)];
    DeviceArray& values = *owner.values.at(0);
    DeviceArray& grads = *owner.grads.at(0);
    const plans::ParameterShard& shard = compiled.layers[static_cast<size_t>(table)].layouts.parameters.at(0);
    const plans::TensorLayout needed = plans::tied_weight_layout(plan.layers[static_cast<size_t>(layer)]);
    const auto shape = plans::local_shape(needed, plan.mesh, shard.global_shape);
    const bool adds = plans::adds_tied_gradient(plan, rank, layer, table);
    if (shape == values.shape()) {
      views.values.push_back(&values);
      if (adds) {
        views.grads.push_back(&grads);
      } else {
        views.grad_block = device.allocate(shape, true);
        views.grads.push_back(views.grad_block.get());
      }
    } else {
      // Rows and columns of the needed block within this rank's block of the table.
      const auto needed_at = plans::local_offset(needed, plan.mesh, shard.global_shape, rank);
      const auto held_at = plans::local_offset(shard.layout, plan.mesh, shard.global_shape, rank);
      views.block_offset = {needed_at[0] - held_at[0], needed_at[1] - held_at[1]};
      views.weight_block = device.allocate(shape, false);
      device.copy_block(values, views.block_offset, *views.weight_block);
      views.grad_block = device.allocate(shape, true);
      views.table_grad = adds ? &grads : nullptr;
      views.values.push_back(views.weight_block.get());
      views.grads.push_back(views.grad_block.get());
    }
  }
  LayerParameters& own = parameters[static_cast<size_t>(layer)];
  for (const TrackedArray& value : own.values) views.values.push_back(value.get());
  for (const TrackedArray& grad : own.grads) views.grads.push_back(grad.get());
  return views;
}

void ParameterViews::add_tied_gradient(DeviceMemory& device) const {
  if (grad_block && table_grad) device.add_block(*grad_block, *table_grad, block_offset);
}

}  // namespace splitbrain::exec
