#pragma once
// CudaArray: a DeviceArray in GPU memory, a block of the rank's caching allocator
// (CudaContext::memory()), the arrays of CudaArrayDevice (cuda_array_device.h).

#include <cstdint>
#include <memory>
#include <vector>

#include "exec/cuda/device_memory_pool.h"
#include "exec/cuda/pooled_block.h"
#include "exec/runtime/device_array.h"

namespace splitbrain::exec::cuda {

class CudaArray final : public DeviceArray {
 public:
  CudaArray(std::vector<int64_t> shape, const std::shared_ptr<DeviceMemoryPool>& pool);
  float* data() const { return static_cast<float*>(block_.data()); }

  // The array's device memory; std::logic_error for an array of another device or a released
  // tensor.
  static float* data_of(DeviceArray& array);
  static const float* data_of(const DeviceArray& array);

 private:
  PooledBlock block_;
};

}  // namespace splitbrain::exec::cuda
