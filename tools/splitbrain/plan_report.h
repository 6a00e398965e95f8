#pragma once
// The planner's ranking for people (table, per-layer explanation) and for programs (JSON, CSV).
// JSON contract: "plans", sorted by predicted time, each with "family", "mesh",
// "iteration_seconds", "peak_memory_bytes" (max over ranks), "feasible", and "plan_file" when
// the plans were emitted.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/search/planner.h"

namespace splitbrain::tools {

struct PlanReport {
  const sim::PlannerRequest& request;
  const sim::PlannerResult& result;
  const std::vector<std::string>& plan_files;  // per ranked plan, empty when not emitted
};

nlohmann::ordered_json plan_report_json(const PlanReport& report);
std::string plan_report_csv(const PlanReport& report);
void print_plan_table(std::ostream& out, const PlanReport& report, int top);
// Per-layer choices, times and memory of the plan at `index` (0-based) in the ranking.
void print_plan_explanation(std::ostream& out, const PlanReport& report, int index);

}  // namespace splitbrain::tools
