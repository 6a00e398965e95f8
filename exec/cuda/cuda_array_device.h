#pragma once
// CudaArrayDevice: the CUDA backend's Device (exec/runtime/device.h). Every array the runtime
// holds is GPU memory from the rank's caching allocator (CudaContext::memory()), and every layer
// pass, copy, fill, sum and parameter update is queued on the rank's compute stream, the stream
// of the layer kernels, so they run in the order the step program gives without the host
// waiting. The host sees values only through upload and download (counted in the run report).
//
// Its concerns, one class each: CudaMemory (cuda_memory.h), CudaHostLink (cuda_host_link.h),
// CudaKernels (cuda_kernels.h), CudaCollectives (cuda_collectives.h: NCCL on the arrays, or
// staged through host memory) and CudaDeviceClock (cuda_device_clock.h). What they share is the
// rank's CudaContext (its device, compute stream, allocator, cuBLAS handle and counts), which the
// device keeps until after them; the collectives also work through the memory and link concerns.

#include <memory>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/device_memory_pool.h"
#include "exec/runtime/device.h"

namespace splitbrain::exec::cuda {

class CudaArrayDevice final : public Device {
 public:
  // On `context`'s device and stream; the context is shared with the rank's kernels.
  explicit CudaArrayDevice(const std::shared_ptr<CudaContext>& context);

  const DeviceMemoryPool& memory_pool() const { return *context_.memory(); }

 private:
  const CudaContext& context_;  // kept alive by the Device's shared state
};

}  // namespace splitbrain::exec::cuda
