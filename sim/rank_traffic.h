#pragma once
// What each rank of a plan sends in a step, in all and by the cluster level each message crosses,
// from the step's priced collectives (Prediction::collectives: each run for its stage's first
// rank), with the memory of its stage: Prediction::ranks. The executor's byte counters measure the
// same figures per rank, so `compare` checks them for equality.

#include <span>
#include <vector>

#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/prediction.h"

namespace splitbrain::sim {

// One entry per rank of `plan`'s mesh, in rank order; `memory_of_stage`: per pipeline stage.
std::vector<RankPrediction> rank_predictions(const plans::Plan& plan, const Cluster& cluster,
                                             std::span<const CollectiveUse> uses,
                                             std::span<const MemoryBreakdown> memory_of_stage);

}  // namespace splitbrain::sim
