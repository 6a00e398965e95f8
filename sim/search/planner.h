#pragma once
// `splitbrain plan`'s engine: builds every named family and the searched plans for a request,
// prices each with the simulator, and ranks them by predicted iteration time.

#include <functional>
#include <string_view>
#include <vector>

#include "sim/search/planner_request.h"
#include "sim/search/searched_plans.h"

namespace splitbrain::sim {

struct PlannerResult {
  std::vector<PricedPlan> plans;         // those that fit first, each group fastest first
  double single_device_seconds = 0.0;    // the same batch on one device (the speedup's baseline)
  int64_t data_parallel_peak_bytes = 0;  // 0 when data parallelism does not apply
  SearchStats stats;
  double search_seconds = 0.0;  // wall time of the whole search
};

// Throws InputError for a request that cannot be planned (no devices, more devices than the
// cluster has, a batch no plan can split), naming the field.
void validate_request(const PlannerRequest& request);

// `progress` receives one line per stage of the search (for long searches on big models).
PlannerResult plan_training(const PlannerRequest& request, const std::function<void(std::string_view)>& progress = {});

}  // namespace splitbrain::sim
