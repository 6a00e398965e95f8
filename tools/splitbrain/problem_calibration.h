#pragma once
// `splitbrain calibrate --model`: the exact kernel problems (convolutions, pooling, activations,
// linear layers) the planner's plans for the named models give each rank, timed with the
// executor's own kernels (forward, input gradient, weight gradient) into Device::measured_kernels,
// which the cost model then reads instead of its curves or GEMM table for those problems
// (sim/kernel_problem.h says why).

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

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

// Times each problem on its busy_ranks first ranks of `comm` at once while the others sleep (the
// slowest busy rank's median, as the rest of calibrate) and adds it to device.measured_kernels.
// Rank 0 prints progress when `print`. Collective over `comm`, which must have at least the
// largest busy_ranks.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm comm,
                             sim::Device& device);

}  // namespace splitbrain::tools
