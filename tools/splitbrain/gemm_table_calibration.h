#pragma once
// `splitbrain calibrate`'s GEMM table (sim/gemm_table.h): the executor's linear kernel timed
// forward, backward-data and weight-gradient accumulation at a grid of (rows, out, in) shapes,
// each as a fraction of the device's peak, which must be calibrated first.

#include <mpi.h>

#include "sim/cluster.h"

namespace splitbrain::tools {

// Measures the table (every rank of `comm` at once, the slowest rank's median of `repeats`) and
// stores it in device.gemm_table; rank 0 prints the grid and every measurement when `print`.
void calibrate_gemm_table(int repeats, bool print, MPI_Comm comm, sim::Device& device);

}  // namespace splitbrain::tools
