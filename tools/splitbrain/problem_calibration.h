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

// Times each problem on the first busy_ranks ranks of every machine at once (this rank is at
// `position_on_machine` on its machine: a host, or all the emulated nodes of one host, whose
// kernels share its caches and memory; Cluster::machine_ranks) while the others sleep. The
// slowest busy rank's time; the median over `repeats` passes over the whole list, so the runs of
// one problem are spread over the measurement; with the caches swept and warm
// (sim::CacheState). Adds both to device.measured_kernels and records the device's last-level
// cache (Device::last_level_cache_bytes) they are read against.
// Rank 0 prints progress when `print`. Collective over `comm`, whose machines must hold at least
// the largest busy_ranks each.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm comm,
                             int position_on_machine, BackendKernels& kernels, sim::Device& device);

}  // namespace splitbrain::tools
