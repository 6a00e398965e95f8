#pragma once
// `splitbrain calibrate --model`: the exact kernel problems (convolutions, pooling, activations,
// linear layers) the planner's plans for the named models give each rank, timed with the
// executor's own kernels of a backend (forward, input gradient, weight gradient) into Device::measured_kernels,
// which the cost model then reads instead of its curves or GEMM table for those problems
// (sim/kernel_problem.h says why).

#include <mpi.h>

#include <vector>

#include "sim/cluster.h"
#include "tools/splitbrain/backend_choice.h"
#include "tools/splitbrain/planned_problems.h"

namespace splitbrain::tools {

// Times each problem on its busy_ranks first ranks of `comm` at once while the others sleep (the
// slowest busy rank's time; the median over `repeats` passes over the whole list, so the runs of
// one problem are spread over the measurement), with the caches swept and warm
// (sim::CacheState), adds both to device.measured_kernels and records the device's last-level
// cache (Device::last_level_cache_bytes) they are read against.
// Rank 0 prints progress when `print`. Collective over `comm`, which must have at least the
// largest busy_ranks.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm comm,
                             BackendKernels& kernels, sim::Device& device);

}  // namespace splitbrain::tools
