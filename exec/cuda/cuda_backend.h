#pragma once
// The "cuda" backend of `splitbrain run`: this rank's GPU (select_device_for_this_rank), the CUDA
// layer ops (cuda_layer_ops.h) and the NCCL collective engine (nccl_collectives.h).

#include "exec/comm/mesh_communicators.h"
#include "exec/runtime/backend.h"

namespace splitbrain::exec::cuda {

// Collective over MPI_COMM_WORLD (the device choice finds the local rank). Throws InputError
// "no CUDA device ..." when this rank sees no GPU, or when a node runs more ranks than it has
// GPUs, before anything else is set up. `tf32`: fp32 products on TF32 tensor cores.
// `kernel_graphs`: cuDNN's and cuBLAS's calls queued through recorded CUDA graphs (call_graphs.h).
Backend make_cuda_backend(comm::MeshCommunicators& communicators, bool tf32, bool kernel_graphs = true);

}  // namespace splitbrain::exec::cuda
