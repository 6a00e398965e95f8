// The staging pool reuses buffers: a later request that fits gets a freed buffer back, a larger
// one replaces the too-small free buffer instead of adding to the pool. Needs a GPU.

#include "exec/cuda/staging_pool.h"

#include <gtest/gtest.h>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_device.h"

namespace splitbrain::exec::cuda {
namespace {

TEST(StagingPool, ReusesFreedBuffersThatFit) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  SB_CUDA_CHECK(cudaSetDevice(0));
  StagingPool pool;
  std::byte* first_device = nullptr;
  {
    const StagingPool::Lease lease = pool.acquire(1 << 20);
    first_device = lease.device();
    ASSERT_NE(lease.host(), nullptr);
    lease.host()[(1 << 20) - 1] = std::byte{7};  // the whole size is there
  }
  {
    const StagingPool::Lease smaller = pool.acquire(1000);
    EXPECT_EQ(smaller.device(), first_device);
    const StagingPool::Lease second = pool.acquire(1000);  // the first is leased: a new one
    EXPECT_NE(second.device(), first_device);
  }
  const StagingPool::Lease larger = pool.acquire(4 << 20);
  EXPECT_NE(larger.device(), nullptr);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
