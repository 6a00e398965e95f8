#pragma once
// Events that mark a point in a stream's queue: a new one recorded now, and whether the GPU has
// reached it.

#include <cuda_runtime_api.h>

#include "exec/cuda/cuda_check.h"

namespace splitbrain::exec::cuda {

// A new event (no timing: cheaper to record and wait on) recorded on `stream` now: it completes
// when what the stream has queued so far has run. The caller destroys it.
inline cudaEvent_t recorded_event(cudaStream_t stream) {
  cudaEvent_t event = nullptr;
  SB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  SB_CUDA_CHECK(cudaEventRecord(event, stream));
  return event;
}

// Whether the work before `event` has run; throws on an error the GPU reported for it.
inline bool event_reached(cudaEvent_t event) {
  const cudaError_t query = cudaEventQuery(event);
  if (query == cudaErrorNotReady) return false;
  SB_CUDA_CHECK(query);
  return true;
}

}  // namespace splitbrain::exec::cuda
