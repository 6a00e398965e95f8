#include "exec/cuda/staging_pool.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::exec::cuda {
namespace {
// Allocation granularity: small requests share one size, so they reuse each other's buffers.
constexpr size_t kMinimumBytes = 4096;
}  // namespace

StagingPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->give_back(buffers_);
}

StagingPool::~StagingPool() {
  for (const Buffers& buffers : free_) free_buffers(buffers);
}

void StagingPool::free_buffers(Buffers buffers) {
  release_in_destructor([&] { SB_CUDA_CHECK(cudaFree(buffers.device)); });
  release_in_destructor([&] { SB_CUDA_CHECK(cudaFreeHost(buffers.host)); });
}

StagingPool::Lease StagingPool::acquire(size_t bytes) {
  bytes = std::max(bytes, kMinimumBytes);
  auto fits = free_.end();
  auto largest = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->bytes >= bytes && (fits == free_.end() || it->bytes < fits->bytes)) fits = it;
    if (largest == free_.end() || it->bytes > largest->bytes) largest = it;
  }
  if (fits != free_.end()) {
    const Buffers buffers = *fits;
    free_.erase(fits);
    return Lease(this, buffers);
  }
  if (largest != free_.end()) {
    free_buffers(*largest);
    free_.erase(largest);
  }
  Buffers buffers;
  buffers.bytes = bytes;
  SB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&buffers.device), bytes));
  try {
    SB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&buffers.host), bytes));
  } catch (...) {
    release_in_destructor([&] { SB_CUDA_CHECK(cudaFree(buffers.device)); });
    throw;
  }
  return Lease(this, buffers);
}

}  // namespace splitbrain::exec::cuda
