#pragma once
// `splitbrain calibrate`'s GEMM table (sim/gemm_table.h): the executor's linear kernel timed
// forward, backward-data and weight-gradient accumulation at a grid of (rows, out, in) shapes.

#include <mpi.h>

#include <array>
#include <vector>

#include "exec/cpu/cpu_context.h"
#include "sim/gemm_table.h"

namespace splitbrain::tools {

// The grid with the rate each pass reached at each point (FLOP/s, 2 m n k per product); turned
// into fractions of the device's peak once the peak is known (it may be the table's fastest).
struct GemmRateTable {
  sim::GemmEfficiencyTable grid;                        // axes only
  std::array<std::vector<double>, 3> flops_per_second;  // per KernelPass, in the grid's order

  double fastest() const;
  sim::GemmEfficiencyTable relative_to(double peak_flops_per_second) const;
};

// Measures the table (every rank of `comm` at once, the slowest rank's median of `repeats`);
// rank 0 prints the grid, every measurement and the time the table took when `print`.
GemmRateTable measure_gemm_table(exec::cpu::CpuContext& context, int repeats, bool print, MPI_Comm comm);

}  // namespace splitbrain::tools
