#pragma once
// A linear tied to an embedding (GPT's lm_head reads wte's table) owns no weight: the plan gives
// the table to the embedding alone (plans/op_sharding.cc), so it sits in the embedding's
// gradient bucket and is synchronised once, with the bytes the simulator counts. The runtime
// lends the tied linear the block of the table it needs as its weight, and ADDS the linear's
// weight gradient into the table's gradient (the embedding, later in backward, adds its own),
// before the bucket is reduced over the embedding's synchronisation axes.
//
// That needs no communication the plan does not list when, for every mesh axis,
//   - an axis the table's gradient is summed over (the embedding's batch or positions) may do
//     anything to the head: if it splits the head's samples or weight, the sum adds each rank's
//     distinct contribution once; if it replicates the head, its ranks hold the same
//     contribution and only the first of them adds it (the rule of a partial sum's bias);
//   - any other axis plays the same part for both: it splits the same dimension of the table
//     (vocabulary rows or columns), or neither uses it;
//   - on a dimension both split, the embedding's axes come first (the head's block then lies
//     inside the rank's table block);
// and the head sits on the embedding's pipeline stage, and ZeRO 3 does not slice the table (it
// is gathered for the embedding only). So a replicated table serves a head that
// splits its vocabulary over the data axes (SplitBrain's plans), and a head split exactly like
// the table uses it whole. Other plans are refused: they would need a gather of the table and a
// reduction of its gradient that the plan does not list.

#include <memory>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/layer_parameters.h"
#include "model/model.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::exec {

// The embedding layer whose table layer `layer` uses as its weight, or -1.
int tied_table_layer(const model::Model& net, int layer);

// Throws InputError naming the tied layer, its embedding, the mesh axis and what differs when a
// plan ties a weight in a way the executor cannot run without extra communication.
void check_tied_weights(const plans::Plan& plan, const plans::CompiledPlan& compiled);

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

  void add_tied_gradient(Device& device) const;
};
ParameterViews parameter_views(Device& device, const plans::Plan& plan, const plans::CompiledPlan& compiled, int rank,
                               std::vector<LayerParameters>& parameters, int layer);

}  // namespace splitbrain::exec
