#pragma once
// The planner's ranking for people (table, per-layer explanation) and for programs (JSON, CSV).
// JSON contract: "plans", sorted by predicted time, each with "family", "mesh",
// "iteration_seconds", "peak_memory_bytes" (max over ranks), "feasible", "times_lower_bound" (its
// step time over "lower_bound"'s seconds; null where there is no bound), and "plan_file" when
// the plans were emitted; "lower_bound" (sim/job_lower_bound.h); with --against, "against": the
// user's plan, the rank it takes among the ranked plans, and the walk to the pick
// (sim/search/plan_difference.h), "differences" and their "total".

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/job_lower_bound.h"
#include "sim/search/plan_difference.h"
#include "sim/search/planner.h"

namespace splitbrain::tools {

// `plan --against FILE`: the user's plan priced by the same simulator, and the walk from it to
// the planner's pick.
struct AgainstPlan {
  std::string file;
  sim::PricedPlan priced;
  size_t pick_index = 0;  // the pick's place in the ranking: the best that fits (else the first)
  sim::PlanDifference difference;
};

struct PlanReport {
  const sim::PlannerRequest& request;
  const sim::PlannerResult& result;
  const std::vector<std::string>& plan_files;  // per ranked plan, empty when not emitted
  const sim::JobLowerBound& bound;
  const AgainstPlan* against = nullptr;  // with --against
};

// The planner's pick: the first ranked plan that fits, else the first.
size_t pick_index(const sim::PlannerResult& result);
// The rank (1-based) the user's plan takes among the ranked plans: after every plan that the
// ranking's order puts before it or ties with it (plans that fit first, then by step time).
int against_rank(const PlanReport& report);

nlohmann::ordered_json plan_report_json(const PlanReport& report);
std::string plan_report_csv(const PlanReport& report);
void print_plan_table(std::ostream& out, const PlanReport& report, int top);
// Per-layer choices, times and memory of the plan at `index` (0-based) in the ranking.
void print_plan_explanation(std::ostream& out, const PlanReport& report, int index);
// The walk from the user's plan to the pick, choice by choice, and its total (needs `against`).
void print_plan_difference(std::ostream& out, const PlanReport& report);

}  // namespace splitbrain::tools
