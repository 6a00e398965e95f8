#pragma once
// CallGraphs: a kernel's library calls queued through CUDA graphs, one recorded per set of
// arguments and launched again whenever the kernel is called with the same arguments.
//
// Why: queuing a convolution through cuDNN's legacy API costs the host 50-150 us per pass on the
// H200s we were lent, two to three times the GPU's own time at batch 64, so a small batch's step
// ran at the host's pace (and moved with the host's speed from one process to the next). A graph
// launch hands the same kernels to the GPU for a few microseconds of host time: the step runs at
// the GPU's pace, as the simulator prices the GPU's kernels.
//
// The contract with the kernel that owns one: `queue_calls` queues work on the context's stream
// only and returns without waiting; it allocates nothing and reads nothing on the host that `key`
// does not name: the key holds every pointer the calls read or write (the caller's arrays, the
// workspace, the kernel's own buffers) and every scalar passed by value or by host pointer that
// may change between calls (beta). The kernel's shape, descriptors and algorithms are fixed for
// its lifetime, so they are not in the key.
//
// The first call with a key queues its calls directly (the libraries' set-up on first use, such as
// loading a kernel's module, must not land in a graph: PyTorch warms up before capturing for the
// same reason); the second records a graph (stream capture) and launches it; later calls with
// that key launch it again. Where recording fails (a library call that cannot be captured), the
// calls are queued directly, and the kernel queues directly from then on. With KernelGraphs::off
// on the context every call is queued directly. Counted in the context's kernel_graph_counts().

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/recorded_call_index.h"

namespace splitbrain::exec::cuda {

class CallGraphs {
 public:
  // How many argument sets a kernel keeps (recorded_call_index.h): its three passes for each of
  // a step's micro-batches (a pipeline's 8 and recomputed forwards: 32), with room for an
  // evaluation's. A step that needed more would find none of them again, every call direct.
  static constexpr std::size_t kGraphsPerKernel = 64;

  explicit CallGraphs(CudaContext& context) : context_(context), graphs_(kGraphsPerKernel) {}
  CallGraphs(const CallGraphs&) = delete;
  CallGraphs& operator=(const CallGraphs&) = delete;

  void queue(const CallKey& key, const std::function<void()>& queue_calls);

 private:
  struct GraphExecDeleter {
    void operator()(cudaGraphExec_t exec) const;
  };
  using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDeleter>;

  // The graph of what `queue_calls` queues, instantiated; null when capturing failed (nothing was
  // queued then; `refusal` says why). Rethrows what `queue_calls` throws other than a CudaError.
  GraphExec record(const std::function<void()>& queue_calls, std::string& refusal);

  CudaContext& context_;
  RecordedCallIndex<GraphExec> graphs_;  // null: the key was seen once, not recorded yet
  bool unrecordable_ = false;
};

// The first word of a layer kernel's keys: the pass whose calls it queues.
enum PassKey : std::uintptr_t { kForwardPass, kBackwardDataPass, kWeightGradientsPass };

// A key's words for a pointer and for a float's bits.
inline std::uintptr_t key_word(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }
std::uintptr_t key_word(float value);

}  // namespace splitbrain::exec::cuda
