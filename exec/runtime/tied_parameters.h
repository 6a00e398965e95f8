#pragma once
// A linear tied to an embedding (GPT's lm_head reads wte's table) owns no weight: the plan gives
// the table to the embedding alone (plans/op_sharding.cc), so it sits in the embedding's
// gradient bucket and is synchronised once, with the bytes the simulator counts. The runtime
// lends the tied linear the embedding's table block as its weight and the table's gradient as
// its weight gradient; the op ADDS into that gradient and the embedding, later in backward,
// adds its own part, before the bucket is reduced.
//
// That is exact only when the linear needs the very block the embedding holds, summed over the
// same axes: the linear's weight layout ([vocab, width] split by its out and in roles) must be
// the table's ([vocab, width] split by the embedding's in and out roles), both must synchronise
// their gradients over the same mesh axes, and both must sit on the same pipeline stage. Any
// other plan would need communication the plan does not list, so it is refused.

#include <vector>

#include "exec/runtime/trainer.h"
#include "model/model.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::exec {

// The embedding layer whose table layer `layer` uses as its weight, or -1.
int tied_table_layer(const model::Model& net, int layer);

// Throws InputError naming the tied layer, its embedding and what differs when a plan ties a
// weight in a way the executor cannot run without extra communication.
void check_tied_weights(const plans::Plan& plan, const plans::CompiledPlan& compiled);

// The parameter tensors layer `layer` computes with and the gradients it adds into: the tied
// table first (if any), then the layer's own.
struct ParameterViews {
  std::vector<const comm::LocalArray*> values;
  std::vector<comm::LocalArray*> grads;
};
ParameterViews parameter_views(const model::Model& net, std::vector<LayerParameters>& parameters, int layer);

}  // namespace splitbrain::exec
