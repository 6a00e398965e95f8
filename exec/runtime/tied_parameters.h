#pragma once
// The tied head's weight on this rank (plans/tied_weights.h says which ties a step can share):
// the runtime lends the head the block of the table it needs as its weight, and ADDS the head's
// weight gradient into the table's gradient (the embedding, later in backward, adds its own)
// before the bucket is reduced over the embedding's synchronisation axes.

#include <memory>
#include <vector>

#include "exec/runtime/device_memory.h"
#include "exec/runtime/layer_parameters.h"
#include "model/model.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::exec {

// The parameter tensors layer `layer` computes with and the gradients it adds into: the tied
// weight first (if any), then the layer's own. When the head needs only part of this rank's
// table block, the views hold a copy of that part and a zeroed gradient for it, which
// add_tied_gradient() adds into the table's gradient once the op's backward has run (or drops,
// on a replica of the head that is not the first).
struct ParameterViews {
  std::vector<const DeviceArray*> values;
  std::vector<DeviceArray*> grads;

  std::unique_ptr<DeviceArray> weight_block;  // a copy of part of the table, or null
  std::unique_ptr<DeviceArray> grad_block;    // the head's weight gradient when not direct
  DeviceArray* table_grad = nullptr;          // where grad_block is added, or null: dropped
  std::vector<int64_t> block_offset;          // of the part within this rank's table block

  void add_tied_gradient(DeviceMemory& device) const;
};
ParameterViews parameter_views(DeviceMemory& device, const plans::Plan& plan, const plans::CompiledPlan& compiled,
                               int rank, std::vector<LayerParameters>& parameters, int layer);

}  // namespace splitbrain::exec
