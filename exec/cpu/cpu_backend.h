#pragma once
// The CPU backend of the executor: the shared ops (exec/ops) over the oneDNN kernels of this
// folder (CpuKernelFactory), on this rank's local tensors and the MPI collectives of exec/comm.

#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cpu {

// `threads` oneDNN threads per rank (1 by default: one rank per core).
OpFactory cpu_backend(int threads = 1);

}  // namespace splitbrain::exec::cpu
