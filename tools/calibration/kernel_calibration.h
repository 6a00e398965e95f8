#pragma once
// The compute side of `splitbrain calibrate`: the executor's own oneDNN kernels timed forward and
// backward at sizes that span the layers of the zoo's CNNs and MLPs, and the optimizer update,
// fitted into the device's efficiency curves (sim/efficiency.h).

#include <mpi.h>

#include "sim/cluster.h"

namespace splitbrain::tools {

struct KernelCalibration {
  int repeats = 5;
  bool print = true;  // rank 0 prints every measurement
};

// Overwrites the device's peak rates, forward and backward efficiency curves, GEMM table and
// memory bandwidth with what this rank measures (every rank of `comm` measures at once).
void calibrate_kernels(const KernelCalibration& options, MPI_Comm comm, sim::Device& device);

}  // namespace splitbrain::tools
