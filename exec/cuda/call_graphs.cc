#include "exec/cuda/call_graphs.h"

#include <bit>
#include <cstdio>
#include <cstdint>
#include <exception>
#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

std::uintptr_t key_word(float value) { return std::bit_cast<std::uint32_t>(value); }

void CallGraphs::GraphExecDeleter::operator()(cudaGraphExec_t exec) const {
  release_in_destructor([&] { SB_CUDA_CHECK(cudaGraphExecDestroy(exec)); });
}

void CallGraphs::queue(const CallKey& key, const std::function<void()>& queue_calls) {
  KernelGraphCounts& counts = context_.kernel_graph_counts();
  if (context_.kernel_graphs() == KernelGraphs::off) {
    queue_calls();
    return;
  }
  if (unrecordable_) {
    ++counts.unrecordable;
    queue_calls();
    return;
  }
  GraphExec* seen = graphs_.find(key);
  if (seen == nullptr) {
    // The first call with these arguments runs directly: what the libraries set up on first use
    // (a kernel's module loaded, cuBLAS's workspace) is not captured into a graph.
    graphs_.insert(key, nullptr);
    ++counts.first_calls;
    queue_calls();
    return;
  }
  if (*seen) {
    SB_CUDA_CHECK(cudaGraphLaunch(seen->get(), context_.stream()));
    ++counts.replayed;
    return;
  }
  std::string refusal;
  GraphExec graph = record(queue_calls, refusal);
  if (!graph) {
    // Said once per kernel: what follows runs, only without the graphs' saving.
    std::fprintf(stderr,
                 "splitbrain: warning: a kernel's calls could not be recorded as a CUDA graph (%s); it queues "
                 "them directly from now on\n",
                 refusal.c_str());
    unrecordable_ = true;
    ++counts.unrecordable;
    queue_calls();
    return;
  }
  SB_CUDA_CHECK(cudaGraphLaunch(graph.get(), context_.stream()));
  *seen = std::move(graph);
  ++counts.recorded;
}

CallGraphs::GraphExec CallGraphs::record(const std::function<void()>& queue_calls, std::string& refusal) {
  const cudaStream_t stream = context_.stream();
  // Thread-local: another thread's calls (the batch reader's page-locked allocations) neither
  // break this capture nor are refused because of it.
  SB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::exception_ptr thrown;
  bool library_refused = false;
  try {
    queue_calls();
  } catch (const CudaError& e) {
    library_refused = true;  // a call that cannot be captured: queued directly instead
    refusal = e.what();
  } catch (...) {
    thrown = std::current_exception();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  cudaError_t made = cudaErrorUnknown;
  if (ended == cudaSuccess && graph != nullptr && !library_refused && !thrown) {
    made = cudaGraphInstantiate(&exec, graph, 0);
  }
  if (graph != nullptr) SB_CUDA_CHECK(cudaGraphDestroy(graph));
  if (thrown) std::rethrow_exception(thrown);
  if (made != cudaSuccess) {
    if (refusal.empty())
      refusal = ended != cudaSuccess ? error_text(ended) : made != cudaErrorUnknown ? error_text(made) : "no graph";
    // Clears the error a refused call left, so the next check does not report it.
    (void)cudaGetLastError();
    return nullptr;
  }
  return GraphExec(exec);
}

}  // namespace splitbrain::exec::cuda
