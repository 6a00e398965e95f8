#include "exec/cuda/device_memory_pool.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {

std::size_t DeviceMemoryPool::rounded(std::size_t bytes) {
  return (bytes + kGranuleBytes - 1) / kGranuleBytes * kGranuleBytes;
}

void* DeviceMemoryPool::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t size = rounded(bytes);
  void* data = nullptr;
  auto cached = free_by_size_.find(size);
  if (cached != free_by_size_.end() && !cached->second.empty()) {
    data = *cached->second.begin();
    cached->second.erase(cached->second.begin());
  } else {
    cudaError_t status = cudaMalloc(&data, size);
    if (status == cudaErrorMemoryAllocation) {
      // Blocks cached for other sizes may be what is missing: give them back and try once more.
      cudaGetLastError();
      release_cached();
      status = cudaMalloc(&data, size);
    }
    SB_CUDA_CHECK(status);
    reserved_bytes_ += static_cast<int64_t>(size);
  }
  in_use_bytes_ += static_cast<int64_t>(size);
  peak_in_use_bytes_ = std::max(peak_in_use_bytes_, in_use_bytes_);
  return data;
}

void DeviceMemoryPool::give_back(void* data, std::size_t bytes) {
  if (data == nullptr) return;
  const std::size_t size = rounded(bytes);
  free_by_size_[size].insert(data);
  in_use_bytes_ -= static_cast<int64_t>(size);
}

void DeviceMemoryPool::release_cached() {
  // cudaFree waits for the device, so nothing queued still uses these blocks.
  for (auto& [size, blocks] : free_by_size_) {
    for (void* block : blocks) {
      SB_CUDA_CHECK(cudaFree(block));
      reserved_bytes_ -= static_cast<int64_t>(size);
    }
    blocks.clear();
  }
}

DeviceMemoryPool::~DeviceMemoryPool() {
  release_in_destructor([&] { release_cached(); });
}

}  // namespace splitbrain::exec::cuda
