#include "plans/recompute_scope.h"

#include "model/block_boundaries.h"

namespace splitbrain::plans {

std::vector<bool> recomputed_layers(const Plan& plan) {
  const model::Model& net = *plan.model;
  const auto n = static_cast<size_t>(net.size());
  std::vector<bool> recomputed(n, false);
  if (!plan.recompute_activations) return recomputed;
  const std::vector<bool> block_start = model::block_starts(net);
  auto chunk_of = [&](size_t v) { return plan.stage_of_layer.empty() ? 0 : plan.stage_of_layer[v]; };
  int blocks_begun = 0;
  for (size_t v = 0; v < n; ++v) {
    const bool chunk_begins = v == 0 || chunk_of(v) != chunk_of(v - 1);
    if (chunk_begins) {
      blocks_begun = 1;
    } else if (block_start[v]) {
      ++blocks_begun;
    }
    const bool in_scope = plan.recompute_blocks == 0 || blocks_begun <= plan.recompute_blocks;
    recomputed[v] = in_scope && net.layer(static_cast<int>(v)).kind != model::OpKind::input;
  }
  return recomputed;
}

}  // namespace splitbrain::plans
