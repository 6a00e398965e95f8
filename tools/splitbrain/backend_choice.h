#pragma once
// Which backend `splitbrain run` trains on (--backend cpu|cuda), and building it. The runtime is
// the same for both; a backend is its layer ops and its collective engine (exec/runtime/backend.h).

#include <string>

#include "exec/comm/mesh_communicators.h"
#include "exec/runtime/backend.h"

namespace splitbrain::tools {

// The backends --backend accepts.
inline constexpr const char* kBackendNames[] = {"cpu", "cuda"};

// "cuda" when this splitbrain was built with the CUDA backend and a GPU is visible, else "cpu".
std::string default_backend();

struct BackendSettings {
  int threads = 1;    // oneDNN threads per rank (cpu)
  bool tf32 = false;  // TF32 tensor cores for fp32 products (cuda)
};

// "cpu": oneDNN ops with `threads` threads per rank, MPI collectives. "cuda": CUDA ops and NCCL
// collectives on this rank's GPU. Throws InputError for "cuda" in a build without the CUDA
// backend, on a rank that sees no GPU or a node with more ranks than GPUs, and for tf32 on
// "cpu". Collective over all ranks.
exec::Backend make_backend(const std::string& name, exec::comm::MeshCommunicators& communicators,
                           const BackendSettings& settings);

}  // namespace splitbrain::tools
