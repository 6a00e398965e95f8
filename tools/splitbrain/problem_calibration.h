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

// Times each problem on the first busy_ranks ranks of every host at once (this rank is at
// `position_on_host` on its host) while the others sleep: every node of a plan computes at once,
// and nodes emulated on one machine share its caches and memory (on 2 emulated nodes, a 4x4
// convolution's gradients timed 20 ms with the other node asleep ran 28-47 ms beside it). The
// slowest busy rank's time; the median over `repeats` passes over the whole list, so the runs of
// one problem are spread over the measurement; with the caches swept and warm
// (sim::CacheState). Adds both to device.measured_kernels and records the device's last-level
// cache (Device::last_level_cache_bytes) they are read against.
// Rank 0 prints progress when `print`. Collective over `comm`, whose hosts must hold at least
// the largest busy_ranks each.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm comm,
                             int position_on_host, BackendKernels& kernels, sim::Device& device);

}  // namespace splitbrain::tools
