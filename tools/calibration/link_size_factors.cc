#include "tools/calibration/link_size_factors.h"

#include <algorithm>

namespace splitbrain::tools {

sim::SizeFactors bandwidth_factors(std::span<const SizeTiming> timings) {
  constexpr double kSmallestFactor = 1e-3;
  constexpr double kLargestFactor = 1e3;
  sim::SizeFactors factors;
  for (const SizeTiming& size : timings) {
    const double streaming = size.measured_seconds - size.latency_seconds;
    const bool latency_bound = streaming < 0.25 * size.measured_seconds;
    if (latency_bound && streaming >= size.line_streaming_seconds) continue;
    // Streaming of nothing (the size took the latency alone) is the largest factor.
    const double factor = streaming > 0.0 ? size.line_streaming_seconds / streaming : kLargestFactor;
    factors.buffer_bytes.push_back(size.buffer_bytes);
    factors.factors.push_back(std::clamp(factor, kSmallestFactor, kLargestFactor));
  }
  return factors;
}

}  // namespace splitbrain::tools
