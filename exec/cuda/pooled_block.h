#pragma once
// One block of a DeviceMemoryPool, owned: it goes back to the pool when this goes. Holds the pool
// by shared_ptr, so a block may outlive whatever made it (an op's kept state, a runtime array).

#include <cstddef>
#include <memory>

#include "exec/cuda/device_memory_pool.h"

namespace splitbrain::exec::cuda {

class PooledBlock {
 public:
  PooledBlock(std::shared_ptr<DeviceMemoryPool> pool, std::size_t bytes)
      : pool_(std::move(pool)), bytes_(bytes), data_(pool_->allocate(bytes)) {}
  ~PooledBlock() { pool_->give_back(data_, bytes_); }
  PooledBlock(const PooledBlock&) = delete;
  PooledBlock& operator=(const PooledBlock&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<DeviceMemoryPool> pool_;
  std::size_t bytes_;
  void* data_;
};

}  // namespace splitbrain::exec::cuda
