#include "plans/recompute_scope.h"

#include <algorithm>

#include "model/block_boundaries.h"

namespace splitbrain::plans {

std::vector<int> block_number_in_chunk(const Plan& plan) {
  const model::Model& net = *plan.model;
  const auto n = static_cast<size_t>(net.size());
  const std::vector<bool> block_start = model::block_starts(net);
  auto chunk_of = [&](size_t v) { return plan.stage_of_layer.empty() ? 0 : plan.stage_of_layer[v]; };
  std::vector<int> number(n, 0);
  int blocks_begun = 0;
  for (size_t v = 0; v < n; ++v) {
    const bool chunk_begins = v == 0 || chunk_of(v) != chunk_of(v - 1);
    if (chunk_begins) {
      blocks_begun = 1;
    } else if (block_start[v]) {
      ++blocks_begun;
    }
    number[v] = blocks_begun;
  }
  return number;
}

std::vector<bool> recomputed_layers(const Plan& plan) {
  const model::Model& net = *plan.model;
  const auto n = static_cast<size_t>(net.size());
  std::vector<bool> recomputed(n, false);
  if (!plan.recompute_activations) return recomputed;
  const std::vector<int> block = block_number_in_chunk(plan);
  for (size_t v = 0; v < n; ++v) {
    const bool in_scope = plan.recompute_blocks == 0 || block[v] <= plan.recompute_blocks;
    recomputed[v] = in_scope && net.layer(static_cast<int>(v)).kind != model::OpKind::input;
  }
  return recomputed;
}

int most_blocks_in_a_chunk(const Plan& plan) {
  const std::vector<int> block = block_number_in_chunk(plan);
  return block.empty() ? 0 : *std::max_element(block.begin(), block.end());
}

}  // namespace splitbrain::plans
