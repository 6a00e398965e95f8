#pragma once
// A new event (no timing: cheaper to record and wait on) recorded on `stream` now: it completes
// when what the stream has queued so far has run. The caller destroys it.

#include <cuda_runtime_api.h>

#include "exec/cuda/cuda_check.h"

namespace splitbrain::exec::cuda {

inline cudaEvent_t recorded_event(cudaStream_t stream) {
  cudaEvent_t event = nullptr;
  SB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  SB_CUDA_CHECK(cudaEventRecord(event, stream));
  return event;
}

}  // namespace splitbrain::exec::cuda
