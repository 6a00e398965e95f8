// cache_eviction_sweep_bytes: twice the described cache, within 32 and 256 MiB.

#include <gtest/gtest.h>

#include "tools/training/cpu_cache_size.h"

namespace splitbrain::tools {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

TEST(CacheEvictionSweep, IsTwiceTheDescribedCacheBetweenItsBounds) {
  EXPECT_DOUBLE_EQ(cache_eviction_sweep_bytes(32 * kMiB), 64 * kMiB);  // an EPYC's L3 slice
  EXPECT_DOUBLE_EQ(cache_eviction_sweep_bytes(100 * kMiB), 200 * kMiB);
}

TEST(CacheEvictionSweep, ACpuThatDescribesNoCacheStillSweeps32MiB) {
  EXPECT_DOUBLE_EQ(cache_eviction_sweep_bytes(0.0), 32 * kMiB);
  EXPECT_DOUBLE_EQ(cache_eviction_sweep_bytes(4 * kMiB), 32 * kMiB);
}

TEST(CacheEvictionSweep, AWholeSocketsL3DescribedToAGuestSweepsAtMost256MiB) {
  EXPECT_DOUBLE_EQ(cache_eviction_sweep_bytes(480 * kMiB), 256 * kMiB);  // a 2-vCPU Xeon guest
}

}  // namespace
}  // namespace splitbrain::tools
