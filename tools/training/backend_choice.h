#pragma once
// Which backend `splitbrain run` trains on (--backend cpu|cuda), and building it. The runtime is
// the same for both; a backend is its layer ops and its collective engine (exec/runtime/backend.h).

#include <functional>
#include <memory>
#include <string>

#include "exec/comm/mesh_communicators.h"
#include "exec/kernels/kernel_factory.h"
#include "exec/runtime/backend.h"
#include "exec/runtime/device.h"
#include "exec/runtime/step_clock.h"
#include "tools/training/collective_transport.h"

namespace splitbrain::tools {

// The backends --backend accepts.
inline constexpr const char* kBackendNames[] = {"cpu", "cuda"};

// "cuda" when this splitbrain was built with the CUDA backend and a GPU is visible, else "cpu".
std::string default_backend();

struct BackendSettings {
  int threads = 1;    // oneDNN threads per rank (cpu)
  bool tf32 = false;  // TF32 tensor cores for fp32 products (cuda)
  // cuDNN's and cuBLAS's calls queued through CUDA graphs recorded per argument set (cuda;
  // exec/cuda/call_graphs.h); ignored on the cpu, which queues nothing.
  bool kernel_graphs = true;
};

// "cpu": oneDNN ops with `threads` threads per rank, MPI collectives. "cuda": CUDA ops and NCCL
// collectives on this rank's GPU. Throws InputError for "cuda" in a build without the CUDA
// backend, on a rank that sees no GPU or a node with more ranks than GPUs, and for tf32 on
// "cpu". Collective over all ranks.
exec::Backend make_backend(const std::string& name, exec::comm::MeshCommunicators& communicators,
                           const BackendSettings& settings);

// A backend's kernels on this rank (its GPU for "cuda"), for timing them alone (calibrate's
// kernel problems), and what such timing needs around them.
struct BackendKernels {
  std::unique_ptr<exec::kernels::KernelFactory> factory;
  // The last-level cache the kernels read through (bytes; 0 where unknown): the CPU's largest
  // cache as sysfs describes it, the GPU's L2.
  double last_level_cache_bytes = 0.0;
  // Puts what the kernels read out of that cache, as the layers before a kernel do in a step
  // larger than it.
  std::function<void()> sweep_caches;
  // Times a kernel's run on the queue the kernels use (exec/runtime/step_clock.h), as a step's
  // instructions are timed: the host's clock on the CPU; on a GPU, events on its stream after a
  // lead that lets the host queue the whole run first (a step's queue runs ahead of the GPU).
  std::unique_ptr<exec::StepClock> clock;
  // How long that clock holds the GPU's stream before each run (0 on the CPU): a call that takes
  // the host longer waited for the device inside (the loss reads its sum), so its queuing time
  // cannot be told apart from the wait.
  double lead_seconds = 0.0;
  // The backend's Device on the same memory and queue, for what the runtime does beside the
  // kernels (uploads, the optimizer's update).
  std::unique_ptr<exec::Device> device;
  // The kernels compute on this rank's thread (the CPU backend), so ranks that share a core
  // share their time (calibration_timing.h, CoreSharing).
  bool computes_on_host = false;
};

// Throws InputError as make_backend does. For "cuda": collective over MPI_COMM_WORLD (it picks
// the local rank's GPU).
BackendKernels make_backend_kernels(const std::string& name, const BackendSettings& settings);

// How calibrate runs the backend's collectives (collective_transport.h): null for "cpu" (the
// executor's MPI code, the default), NCCL on this rank's GPU for "cuda" (collective over
// MPI_COMM_WORLD: it picks the local rank's GPU). Throws InputError as make_backend does.
std::unique_ptr<CollectiveTransport> make_collective_transport(const std::string& name);

// The cuda backend's cuDNN algorithm choices as a file (exec/cuda/conv_algorithm_file.h), named by
// `flag` in errors: saving this process's (calibrate), adopting a file's before any kernel is made
// (run). Adopting refuses a file timed on another GPU model. InputError in a build without the
// CUDA backend.
void save_conv_algorithms(const std::string& path, const std::string& flag);
void adopt_conv_algorithms(const std::string& path, const std::string& flag);

}  // namespace splitbrain::tools
