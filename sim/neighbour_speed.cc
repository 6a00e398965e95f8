#include "sim/neighbour_speed.h"

#include "sim/kernel_problem.h"
#include "sim/prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// How long a time-sharing kernel lets a rank compute while another waits for its core: Linux's
// base slice (EEVDF), 0.75 ms x (1 + log2 CPUs), on a host of 2 CPUs. Ranks that compute only
// between waits shorter than this take turns at their waits, not at the slice.
constexpr double kTurnSeconds = 1.5e-3;

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

std::optional<NodeSharing> node_sharing(const Cluster& cluster, const plans::Plan& plan, double speedup) {
  const int per_node = busy_ranks_per_node(cluster, plan.mesh);
  if (cluster.device.measured_kernels.empty() || per_node <= 1) return std::nullopt;
  NodeSharing sharing;
  sharing.ranks_per_node = per_node;
  // The cores calibrate found where it recorded them; else what the busy ranks achieve together.
  const int cores =
      cluster.cpu_cores_per_node > 0 ? cluster.cpu_cores_per_node : static_cast<int>(std::lround(per_node / speedup));
  sharing.cores = std::clamp(cores, 1, per_node);
  sharing.turn_seconds = kTurnSeconds;
  const auto node_of_rank = [&](int rank) {
    return static_cast<int>(unit_of_device(cluster, device_of_rank(cluster, rank), 0));
  };
  for (int stage = 0; stage < plan.stage_count(); ++stage)
    sharing.node_of_stage.push_back(node_of_rank(first_rank_of_stage(plan, stage)));
  // Each stage's ranks on its node, in one pass over the ranks; the fewest are the replicas.
  std::vector<int> on_node(sharing.node_of_stage.size(), 0);
  for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
    const auto stage = static_cast<size_t>(plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0);
    if (node_of_rank(rank) == sharing.node_of_stage[stage]) ++on_node[stage];
  }
  sharing.replicas = std::min(per_node, *std::min_element(on_node.begin(), on_node.end()));
  return sharing;
}

}  // namespace splitbrain::sim
