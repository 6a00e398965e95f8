#include "sim/neighbour_speed.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace splitbrain::sim {
namespace {

double total_seconds(const Device::MeasuredKernel& kernel) {
  return kernel.forward_seconds + kernel.backward_input_seconds + kernel.backward_weight_seconds;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

double alone_speedup(const Device& device, int busy_ranks) {
  if (busy_ranks <= 1) return 1.0;
  // The keys sim::kernel_key writes: "<problem>, N busy", with caches swept.
  const std::string busy_suffix = fmt::format(", {} busy", busy_ranks);
  std::vector<double> ratios;
  for (const auto& [key, busy] : device.measured_kernels) {
    if (!ends_with(key, busy_suffix)) continue;
    const std::string alone_key = key.substr(0, key.size() - busy_suffix.size()) + ", 1 busy";
    const auto alone = device.measured_kernels.find(alone_key);
    if (alone == device.measured_kernels.end()) continue;
    const double alone_seconds = total_seconds(alone->second);
    if (alone_seconds > 0.0) ratios.push_back(total_seconds(busy) / alone_seconds);
  }
  if (ratios.empty()) return 1.0;
  const auto middle = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
  std::nth_element(ratios.begin(), middle, ratios.end());
  // Neighbours never make a kernel faster: a ratio below 1 is noise.
  return std::max(1.0, *middle);
}

Cluster with_neighbours_busy(const Cluster& cluster, double speedup, double neighbours_busy) {
  const double idle = 1.0 - std::clamp(neighbours_busy, 0.0, 1.0);
  Cluster faster = cluster;
  if (speedup <= 1.0 || idle <= 0.0) return faster;
  // Time moves linearly between busy and alone, as the timed problems' seconds do.
  const double seconds_factor = 1.0 - idle * (1.0 - 1.0 / speedup);
  Device& device = faster.device;
  device.peak_fp32_flops_per_second /= seconds_factor;
  device.peak_fp16_flops_per_second /= seconds_factor;
  device.peak_bf16_flops_per_second /= seconds_factor;
  device.memory_bandwidth_bytes_per_second /= seconds_factor;
  return faster;
}

}  // namespace splitbrain::sim
