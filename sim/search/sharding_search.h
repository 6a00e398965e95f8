#pragma once
// Per-layer sharding by dynamic programming over the layer sequence (SoyBean/Tofu's search,
// with the mesh's named axes as its cuts). Only layers that choose their own sharding are
// decided (plans/op_sharding.h: parameters, tied weights, inputs); every other layer follows
// the layer it reads. A layer's cost depends on its own decision and on the decisions of the
// layers it reads, so the DP's state is the last decision, and each state keeps the Pareto set
// of (time, memory) so a device's memory can be respected.
//
// Chains (VGG, AlexNet, MLPs) are solved exactly. In a DAG (residual blocks) a skip edge reads a
// decision older than the last one; it is priced with the decision on the partial path being
// extended (kept through back-pointers), so the answer is a very good plan but not guaranteed
// optimal; the planner then prices every finalist with the full simulator.

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "plans/layer_sharding.h"
#include "sim/search/cost_table.h"
#include "sim/search/search_mesh.h"

namespace splitbrain::sim {

struct ShardingSearchOptions {
  int64_t memory_limit_bytes = std::numeric_limits<int64_t>::max();
  int pareto_limit = 6;  // entries kept per state: bounds the work on deep models
};

struct ShardingAssignment {
  std::vector<plans::LayerSharding> layers;  // one per model layer
  double seconds = 0.0;                      // the DP's objective: micro-batches x per micro-batch + per step
  int64_t memory_bytes = 0;                  // the DP's additive estimate
};

// The candidate shardings of a deciding layer: `data` splits the batch; `model` splits the
// batch, the output features, the contraction, or nothing; `space` splits height/positions,
// the batch, or nothing. Only choices the layer accepts (CostTable::layouts) are returned.
std::vector<plans::LayerSharding> decision_candidates(CostTable& table, int layer, const SearchMesh& mesh);

// The sharding of every non-deciding layer given the deciding ones: inherited from the first
// producer, falling back to its batch split alone, then to full replication, when the inherited
// one does not fit the layer (a strided pool after a height split, say).
void fill_followers(CostTable& table, std::vector<plans::LayerSharding>& layers);

// The cheapest assignment within the memory limit, or nullopt when no assignment fits.
std::optional<ShardingAssignment> search_shardings(CostTable& table, const SearchMesh& mesh,
                                                   const ShardingSearchOptions& options);

// The DP's objective for a complete assignment (the same additive cost the search minimises).
double assignment_seconds(CostTable& table, const std::vector<plans::LayerSharding>& layers);

}  // namespace splitbrain::sim
