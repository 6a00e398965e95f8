#include "tools/calibration/cache_knee.h"

#include <algorithm>
#include <cmath>

namespace splitbrain::tools {

double cache_bytes_from_read_rates(std::span<const ReadRate> rates) {
  if (rates.size() < 2) return 0.0;
  const auto fastest = std::max_element(rates.begin(), rates.end(), [](const ReadRate& a, const ReadRate& b) {
    return a.bytes_per_second < b.bytes_per_second;
  });
  const double memory_rate = rates.back().bytes_per_second;
  constexpr double kLeastCacheSpeedup = 1.25;
  if (memory_rate <= 0.0 || fastest->bytes_per_second < kLeastCacheSpeedup * memory_rate) return 0.0;
  const double threshold = std::sqrt(fastest->bytes_per_second * memory_rate);
  for (auto above = fastest; above + 1 != rates.end(); ++above) {
    const ReadRate& below = *(above + 1);
    if (below.bytes_per_second > threshold) continue;
    // Where the line through the two points, in log working set and log rate, meets the threshold.
    const double fall = std::log(above->bytes_per_second) - std::log(below.bytes_per_second);
    const double part = fall > 0.0 ? (std::log(above->bytes_per_second) - std::log(threshold)) / fall : 1.0;
    return std::exp(std::log(above->working_set_bytes) +
                    part * (std::log(below.working_set_bytes) - std::log(above->working_set_bytes)));
  }
  return 0.0;  // unreachable: the last rate is the memory's, below the threshold
}

}  // namespace splitbrain::tools
