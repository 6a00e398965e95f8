#include "plans/sequence_parallel.h"

#include <algorithm>

#include "plans/op_rules.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

// The mesh axes that split a linear layer's features (its `out` or `in` role): the tensor
// parallelism of the plan, outermost first.
std::vector<int> tensor_axes(const Plan& plan) {
  std::vector<int> axes;
  for (int v = 0; v < plan.model->size(); ++v) {
    if (plan.model->layer(v).kind != model::OpKind::linear) continue;
    const LayerSharding& sharding = plan.layers[static_cast<size_t>(v)];
    for (const std::vector<int>* role : {&sharding.out, &sharding.in}) {
      for (int axis : *role) {
        if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
      }
    }
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The layers Megatron runs in the sequence-parallel region: per-token work on [N, T, D]
// activations that tensor parallelism does not split.
bool in_sequence_region(const model::Layer& layer) {
  return op_rules(layer.kind).per_token && layer.output_shape.size() == 2;  // [T, D] per sample
}

}  // namespace

std::optional<Plan> with_sequence_parallelism(const Plan& plan) {
  const std::vector<int> axes = tensor_axes(plan);
  if (axes.empty()) return std::nullopt;
  Plan out = plan;
  bool changed = false;
  for (int v = 0; v < plan.model->size(); ++v) {
    const model::Layer& layer = plan.model->layer(v);
    if (!in_sequence_region(layer)) continue;
    LayerSharding& sharding = out.layers[static_cast<size_t>(v)];
    LayerSharding split;
    split.batch = sharding.batch;
    std::erase_if(split.batch, [&](int axis) { return std::find(axes.begin(), axes.end(), axis) != axes.end(); });
    split.spatial = axes;
    try {
      layer_layouts(*plan.model, v, split, plan.mesh, plan.micro_batch_size(), plan.dtype);
    } catch (const PlanError&) {
      return std::nullopt;  // the sequence does not divide over the tensor-parallel group
    }
    sharding = split;
    changed = true;
  }
  if (!changed) return std::nullopt;
  out.regather_saved_inputs = true;
  out.family += " +sp";
  return out;
}

}  // namespace splitbrain::plans
