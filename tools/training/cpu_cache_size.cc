#include "tools/training/cpu_cache_size.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace splitbrain::tools {

double cpu_last_level_cache_bytes() {
  double largest = 0.0;
  for (int index = 0; index < 16; ++index) {
    std::ifstream size_file(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", index));
    std::string size;
    if (!(size_file >> size)) break;
    double bytes = std::strtod(size.c_str(), nullptr);
    if (size.ends_with('K')) bytes *= 1024.0;
    if (size.ends_with('M')) bytes *= 1024.0 * 1024.0;
    largest = std::max(largest, bytes);
  }
  return largest;
}

double cache_eviction_sweep_bytes(double described_cache_bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return std::clamp(2.0 * described_cache_bytes, 32.0 * kMiB, 256.0 * kMiB);
}

}  // namespace splitbrain::tools
