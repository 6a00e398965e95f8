// calibrate's per-size bandwidth factors (tools/calibration/link_size_factors.h): every kept size's
// factor gives back its measured time, and only latency-bound sizes slower than the line drop.

#include "tools/calibration/link_size_factors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace splitbrain::tools {
namespace {

double priced_seconds(const SizeTiming& size, double factor) {
  return size.latency_seconds + size.line_streaming_seconds / factor;
}

TEST(LinkSizeFactors, KeptSizesPriceTheirMeasuredTimeAndOnlySlowLatencyBoundOnesDrop) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> log_scale(-3.0, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SizeTiming> timings;
    const double latency = 100e-6;
    for (double bytes = 8; bytes <= 64 << 20; bytes *= 4) {
      const double line_streaming = bytes / 120e6;
      // The wire streamed up to 1000x faster or slower than the line at this size.
      const double streaming = line_streaming * std::pow(10.0, log_scale(random));
      timings.push_back({bytes, latency + streaming, latency, line_streaming});
    }
    const sim::SizeFactors factors = bandwidth_factors(timings);
    ASSERT_EQ(factors.buffer_bytes.size(), factors.factors.size());
    size_t kept = 0;
    for (const SizeTiming& size : timings) {
      const double streaming = size.measured_seconds - size.latency_seconds;
      const bool dropped = streaming < 0.25 * size.measured_seconds && streaming >= size.line_streaming_seconds;
      const bool listed = kept < factors.buffer_bytes.size() && factors.buffer_bytes[kept] == size.buffer_bytes;
      EXPECT_EQ(listed, !dropped) << size.buffer_bytes << " B, trial " << trial;
      if (!listed) continue;
      const double factor = factors.factors[kept++];
      EXPECT_GE(factor, 1e-3);
      EXPECT_LE(factor, 1e3);
      if (factor > 1e-3 && factor < 1e3) {
        EXPECT_NEAR(priced_seconds(size, factor), size.measured_seconds, 1e-9 * size.measured_seconds);
      }
    }
    EXPECT_EQ(kept, factors.buffer_bytes.size());
  }
}

TEST(LinkSizeFactors, ABurstThroughATokenBucketIsKept) {
  // The emulated 1 Gb/s link: 16 KiB in 159 us over a latency of 143 us, the line's streaming 134 us.
  const std::vector<SizeTiming> timings = {{16384, 159e-6, 143e-6, 134e-6}};
  const sim::SizeFactors factors = bandwidth_factors(timings);
  ASSERT_EQ(factors.factors.size(), 1u);
  EXPECT_NEAR(priced_seconds(timings[0], factors.factors[0]), 159e-6, 1e-12);
}

TEST(LinkSizeFactors, ASizeThatTookTheLatencyAloneStreamsFree) {
  const std::vector<SizeTiming> timings = {{8, 100e-6, 100e-6, 0.1e-6}};
  const sim::SizeFactors factors = bandwidth_factors(timings);
  ASSERT_EQ(factors.factors.size(), 1u);
  EXPECT_EQ(factors.factors[0], 1e3);
}

}  // namespace
}  // namespace splitbrain::tools
