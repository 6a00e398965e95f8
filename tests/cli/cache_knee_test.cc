// cache_bytes_from_read_rates: the working set where a read-rate curve falls from the cache's rate
// to the memory's, on curves whose knee is known.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tools/calibration/cache_knee.h"

namespace splitbrain::tools {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const std::vector<double> kWorkingSetsMiB = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};

// A cache of `cache_mib` read at `cache_rate`, memory at `memory_rate`, the part of a larger
// working set that fits read at the cache's rate (a cache replacing lines at random).
std::vector<ReadRate> curve(double cache_mib, double cache_rate, double memory_rate) {
  std::vector<ReadRate> rates;
  for (double mib : kWorkingSetsMiB) {
    const double cached = std::min(1.0, cache_mib / mib);
    const double seconds_per_byte = cached / cache_rate + (1.0 - cached) / memory_rate;
    rates.push_back({mib * kMiB, 1.0 / seconds_per_byte});
  }
  return rates;
}

TEST(CacheKnee, AStepAtTheCachesSizeIsFoundBetweenTheWorkingSetsAroundIt) {
  // 80 GB/s up to 12 MiB, 20 GB/s from 16 MiB: halfway on log scales is sqrt(12 * 16) MiB.
  std::vector<ReadRate> rates;
  for (double mib : kWorkingSetsMiB) rates.push_back({mib * kMiB, mib <= 12 ? 80e9 : 20e9});
  EXPECT_NEAR(cache_bytes_from_read_rates(rates) / kMiB, std::sqrt(12.0 * 16.0), 1e-9);
}

TEST(CacheKnee, TheFoundSizeFollowsTheCacheAndNotTheRates) {
  for (double cache_mib : {4.0, 8.0, 16.0, 32.0}) {
    const double found = cache_bytes_from_read_rates(curve(cache_mib, 80e9, 20e9)) / kMiB;
    // Halfway (geometric) between 80 and 20 GB/s two thirds of the working set are cached: at 1.5x
    // the cache, read between two of the measured working sets.
    EXPECT_GT(found, cache_mib) << cache_mib;
    EXPECT_LT(found, 2.0 * cache_mib) << cache_mib;
    // The same cache behind rates four times higher (a faster CPU) is found at the same size.
    EXPECT_NEAR(cache_bytes_from_read_rates(curve(cache_mib, 320e9, 80e9)) / kMiB, found, 1e-9 * found) << cache_mib;
  }
  EXPECT_LT(cache_bytes_from_read_rates(curve(4.0, 80e9, 20e9)), cache_bytes_from_read_rates(curve(16.0, 80e9, 20e9)));
}

TEST(CacheKnee, ACurveWithoutACacheToTellApartGivesNothing) {
  std::vector<ReadRate> flat;
  for (double mib : kWorkingSetsMiB) flat.push_back({mib * kMiB, 20e9});
  EXPECT_EQ(cache_bytes_from_read_rates(flat), 0.0);
  EXPECT_EQ(cache_bytes_from_read_rates(curve(8.0, 24e9, 20e9)), 0.0);  // 1.2x: noise, not a cache
  EXPECT_EQ(cache_bytes_from_read_rates({}), 0.0);
  const std::vector<ReadRate> one = {{kMiB, 80e9}};
  EXPECT_EQ(cache_bytes_from_read_rates(one), 0.0);
}

TEST(CacheKnee, ASlowSpellBeforeTheFastestPointDoesNotEndTheCache) {
  // The 2 MiB read was slowed by a neighbour; the cache still ends past 12 MiB.
  std::vector<ReadRate> rates;
  for (double mib : kWorkingSetsMiB) rates.push_back({mib * kMiB, mib <= 12 ? 80e9 : 20e9});
  rates.front().bytes_per_second = 15e9;
  EXPECT_NEAR(cache_bytes_from_read_rates(rates) / kMiB, std::sqrt(12.0 * 16.0), 1e-9);
}

}  // namespace
}  // namespace splitbrain::tools
