#pragma once
// `splitbrain calibrate --model`: the exact kernel problems (convolutions, pooling, activations,
// linear layers) the planner's plans for the named models give each rank, timed with the
// executor's own kernels of a backend (forward, input gradient, weight gradient) into Device::measured_kernels,
// which the cost model then reads instead of its curves or GEMM table for those problems
// (sim/kernel_problem.h says why).

#include <mpi.h>

#include <vector>

#include "sim/cluster.h"
#include "tools/training/backend_choice.h"
#include "tools/calibration/planned_problems.h"

namespace splitbrain::tools {

// Times each problem on its busy_ranks first ranks of `host` (this rank's host) at once while the
// others sleep (each rank's median over `repeats` passes over the whole list, so the runs of one
// problem are spread over the measurement, then the slowest rank's), with the caches swept and
// warm (sim::CacheState), every host at once as a step computes; adds that to
// device.measured_kernels and records the device's last-level cache
// (Device::last_level_cache_bytes) they are read against.
// Why per host: a run timed right after a barrier across hosts carries that link's traffic (on
// 2 emulated nodes x 1 rank, a tiny GPT's 64 x 64 x 192 GEMM read 27-54 us in three calibrations
// when every timed run began and ended with a collective over the TCP link, 22 us per host; one
// host's calibration reads 35 us).
// Rank 0 of `world` prints progress when `print`. Collective over `world`; `host` must have at
// least the largest busy_ranks.
void measure_kernel_problems(const std::vector<PlannedProblem>& problems, int repeats, bool print, MPI_Comm world,
                             MPI_Comm host, BackendKernels& kernels, sim::Device& device);

}  // namespace splitbrain::tools
