#pragma once
// Which kernel problems `splitbrain calibrate --model` times: those of the plans the planner ranks
// for the named models, at the micro-batches the plans could use (problem_calibration.h times them).

#include <cstdint>
#include <string>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/kernel_problem.h"

namespace splitbrain::tools {

// A planning request whose plans' kernels are to be measured.
struct PlanningTarget {
  std::string model_spec;
  int devices = 1;
  int64_t global_batch = 64;
};

// A problem and how many ranks of a node run it at once under the plans that have it.
struct PlannedProblem {
  sim::KernelProblem problem;
  int busy_ranks = 1;
  bool operator==(const PlannedProblem&) const = default;
};

// Every distinct kernel problem among the plans `splitbrain plan` ranks for each target on
// `cluster` (all its candidates: the named families and the searched plans), in first-seen order,
// with as many ranks busy as the plan has per node and also alone.
std::vector<PlannedProblem> planned_kernel_problems(const std::vector<PlanningTarget>& targets,
                                                    const sim::Cluster& cluster);

// The problems of `problems` that `device` has no measurement of (sim::kernel_key, caches swept).
std::vector<PlannedProblem> unmeasured(const std::vector<PlannedProblem>& problems, const sim::Device& device);

// The plan's own micro-batch (samples, before the data split) and, for a pipeline, every other
// micro-batch the planner's search tries on its stage count (sim::micro_batch_options).
std::vector<int64_t> micro_batches_to_measure(const plans::Plan& plan, const plans::CompiledPlan& compiled);

}  // namespace splitbrain::tools
