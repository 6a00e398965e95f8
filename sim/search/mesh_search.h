#pragma once
// The overall search: every mesh {pipe, data, space, model} the request allows, each with the
// sharding DP, the stage partition, every micro-batch count, 1F1B or interleaved with each chunk
// count, sequence parallelism, and each plan's ZeRO / recompute variants (plan_pricing.h); the
// best plan over all of them, fitting first.
//
// Best first: every candidate plan is built, and bounded (plan_pricing.h: no variant of it is
// faster than its bound), before any is timed; then they are priced in the order of their
// bounds, each against the best so far, and the search stops at the first whose bound cannot
// beat the best that fits. So only candidates whose bound is below the answer are timed (and
// those priced while no plan fits yet), however late their mesh comes.
//
// Both phases run on several threads. Pricing shares the best plan so far, so what each thread
// skips depends on the others' timing; the answer does not: a tie goes to the candidate first in
// the one-thread order (meshes in the order built, then candidates within a mesh), whichever
// thread priced it first.

#include <functional>
#include <optional>
#include <string_view>

#include "sim/search/planner_request.h"
#include "sim/search/searched_plans.h"

namespace splitbrain::sim {

// The best plan; then, where it is not context-parallel, the best of the context-parallel
// candidates (context_parallel_search.h), priced until its own best is below every bound of
// theirs left, so that the ranking shows what context parallelism gives. Empty when nothing can
// be built.
//
// `progress` (when set) hears a line per mesh as its candidates are built, then a line per tenth
// of the candidates priced, with the best so far. It is called from the search threads, one
// call at a time.
std::vector<PricedPlan> best_plans(const PlannerRequest& request, SearchStats& stats,
                                   const std::function<void(std::string_view)>& progress = {});

}  // namespace splitbrain::sim
