#pragma once
// The CPU backend of the executor: host arrays (HostDevice), the shared ops (exec/ops) over the
// oneDNN kernels of this folder (CpuKernelFactory), and the MPI collectives of exec/comm.

#include "exec/comm/mesh_communicators.h"
#include "exec/runtime/backend.h"

namespace splitbrain::exec::cpu {

// `threads` oneDNN threads per rank (1 by default: one rank per core). `communicators` must
// outlive the backend.
Backend make_cpu_backend(comm::MeshCommunicators& communicators, int threads = 1);

// The ops alone (a backend double wraps them around its own device).
OpFactory cpu_layer_ops(int threads = 1);

}  // namespace splitbrain::exec::cpu
