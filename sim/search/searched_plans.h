#pragma once
// Plans found by search rather than by rule:
//   soybean m=M     the per-layer optimum (sharding DP) on {data: N/M, model: M}, no pipeline;
//   pipeline P      {pipe: P, data: N/P}: the batch split over data, stages by the partition DP,
//                   the number of micro-batches searched (1F1B);
// and the pieces of the overall search over every mesh (mesh_search.h).
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
  plans::Plan plan;       // its `family` names it
  Prediction prediction;  // the full simulation (empty while prediction_pending)
  bool feasible = false;  // every rank within the memory limit
  // The step time the search ranks by: the prediction's, up to rounding (sim/steady_pipeline.h).
  // A long pipeline's full timeline is run only for the plans the search keeps.
  double seconds = 0;
  bool prediction_pending = false;
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

// Micro-batch counts worth trying on `stages` stages: 1 without a pipeline, else stages x
// {1, 2, 4, 8} where they divide the batch.
std::vector<int> micro_batch_options(int64_t batch, int stages);

// Micro-batch counts the overall search tries on `stages` stages: every count that splits each of
// the `data_replicas` replicas' share of the batch evenly into at least `stages` micro-batches,
// the fewest samples per micro-batch first; 1 without a pipeline.
std::vector<int> micro_batch_counts(int64_t batch, int stages, int data_replicas);

// Model chunks per stage the interleaved schedule is tried with, at most: Megatron-LM's published
// runs use 2 to 6; each chunk more adds hand-overs for a smaller bubble.
inline constexpr int kMaxChunksPerStage = 8;

// `pipeline` (a 1F1B plan on `mesh`) as interleaved 1F1B with 2 to kMaxChunksPerStage model
// chunks per stage, its layers cut into chunks (between blocks) for time; none when the schedule
// cannot run it (the micro-batches are not a multiple of the stages) or the blocks are too few.
std::vector<plans::Plan> interleaved_plans(const PlannerRequest& request, const SearchMesh& mesh,
                                           const plans::Plan& pipeline);

}  // namespace splitbrain::sim
