#pragma once
// The named families of hybrid plans, built by rule, so users can compare the ideas the tool
// unifies side by side (README "The ideas it unifies"):
//   data-parallel        {data: N}: every layer splits the batch.
//   model-parallel       {model: N}: every layer with weights splits its output features (where
//                        they divide; otherwise it is replicated), Gholami's eq. (3).
//   splitbrain g=G       {data: N/G, model: G}: layers without a weight matrix to shard (convs,
//                        norms, the input) split the batch over both axes; linear layers split
//                        the batch over data and their output features over model (Lai et
//                        al.'s FC sharding in groups of G; also Gholami's conv-batch + FC grid).
//   gholami-grid RxC     {data: C, model: R}: every layer with weights on the same R x C grid.
//   domain-parallel s=S  {data: N/S, space: S}: layers split height where they can (stride-1
//                        same convs, tiling pools), else the batch over both axes.
// Each plan's `family` field carries its label. A layer whose preferred split does not fit (10 classes over 4 ranks)
// falls back to splitting only the batch, then to replication: the family stays recognisable and always valid.

#include <optional>
#include <vector>

#include "plans/plan.h"
#include "sim/search/planner_request.h"

namespace splitbrain::sim {

std::optional<plans::Plan> data_parallel_plan(const PlannerRequest& request);
std::optional<plans::Plan> model_parallel_plan(const PlannerRequest& request);
std::vector<plans::Plan> splitbrain_plans(const PlannerRequest& request);
std::vector<plans::Plan> gholami_grid_plans(const PlannerRequest& request);
std::vector<plans::Plan> domain_parallel_plans(const PlannerRequest& request);

}  // namespace splitbrain::sim
