#pragma once
// Plans found by search rather than by rule:
//   soybean m=M     the per-layer optimum (sharding DP) on {data: N/M, model: M}, no pipeline;
//   pipeline P      {pipe: P, data: N/P}: the batch split over data, stages by the partition DP,
//                   the number of micro-batches searched (1F1B);
//   best            every mesh {pipe, data, space, model}: sharding DP, stage partition,
//                   micro-batches, and ZeRO / activation recompute where memory needs them.
// Every finalist is priced by the full simulator, which has the last word.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/search/families.h"
#include "sim/search/planner_request.h"
#include "sim/search/search_mesh.h"
#include "sim/simulation.h"

namespace splitbrain::sim {

struct SearchStats {
  int64_t plans_simulated = 0;  // complete plans priced by simulate()
  int64_t memory_walks = 0;     // plans whose fit was decided by their programs' memory alone
  int64_t layer_prices = 0;     // distinct (layer, sharding) and (edge, shardings) prices
  int64_t meshes_searched = 0;
  int64_t plans_left_out = 0;         // plans and variants no step can run (plans/tied_weights.h)
  std::string first_left_out_reason;  // why the first of them was left out
};

struct PricedPlan {
  plans::Plan plan;  // its `family` names it
  Prediction prediction;
  bool feasible = false;  // every rank within the memory limit
};

// The plan for one mesh and micro-batch count: each layer's sharding found by the DP, or taken
// from `given` (deciding layers; the others follow) when it is not null; stages by partition
// when the mesh has a pipe axis; a tied embedding sharded like its head where the step could not
// share it otherwise (plans/tied_weights.h). nullopt when nothing fits (the batch does not
// divide, or no assignment fits in memory).
std::optional<plans::Plan> searched_plan(const PlannerRequest& request, const SearchMesh& mesh, int micro_batches,
                                         const std::vector<plans::LayerSharding>* given, SearchStats& stats);

std::vector<PricedPlan> soybean_plans(const PlannerRequest& request, SearchStats& stats);
std::vector<PricedPlan> pipeline_plans(const PlannerRequest& request, SearchStats& stats);
std::optional<PricedPlan> best_plan(const PlannerRequest& request, SearchStats& stats);

// Micro-batch counts worth trying on `stages` stages: 1 without a pipeline, else stages x
// {1, 2, 4, 8} where they divide the batch.
std::vector<int> micro_batch_options(int64_t batch, int stages);

// The micro-batch counts above stages x 8 that leave 2 and then 1 samples per data replica in a
// micro-batch (in that order), where the batch divides so; none without a pipeline.
std::vector<int> small_micro_batch_options(int64_t batch, int stages, int data_replicas);

}  // namespace splitbrain::sim
