#include "sim/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "sim/cluster_error.h"

namespace splitbrain::sim {
namespace {

[[noreturn]] void fail(std::string_view source, std::string_view field, std::string_view problem) {
  throw ClusterError(fmt::format("{}: {}: {}", source, field, problem));
}

// Values must lie in [lowest, highest]: ranges wide enough for any real machine and narrow
// enough that no cost computed from them (bytes / bandwidth, flops / rate, sums of latencies
// over thousands of collectives) leaves double's range.
void require_range(double value, double lowest, double highest, std::string_view source, std::string_view field) {
  // Written so that NaN fails too.
  if (!(value >= lowest && value <= highest)) {
    fail(source, field, fmt::format("must be between {:g} and {:g}, got {:g}", lowest, highest, value));
  }
}

constexpr double kLowestRate = 1.0;  // bytes or flops per second
constexpr double kHighestRate = 1e21;
constexpr double kHighestSeconds = 1e6;  // a latency or a measured kernel

void require_positive(double value, std::string_view source, std::string_view field) {
  require_range(value, kLowestRate, kHighestRate, source, field);
}

void validate_curve(const EfficiencyCurve& curve, std::string_view source, const std::string& path,
                    std::string_view size_key) {
  require_range(curve.max_efficiency, 1e-6, 1.0, source, path + ".max_efficiency");
  require_range(curve.half_efficiency_size, 0.0, 1e30, source, fmt::format("{}.{}", path, size_key));
}

// The grid's axes ascend from 1 up; every pass holds one efficiency in (0, 1] per grid point.
void validate_gemm_table(const GemmEfficiencyTable& table, std::string_view source) {
  const std::string path = "device.gemm_table";
  const std::pair<const char*, const std::vector<int64_t>*> axes[] = {
      {"m", &table.m}, {"n", &table.n}, {"k", &table.k}};
  for (const auto& [name, axis] : axes) {
    if (axis->empty()) fail(source, fmt::format("{}.{}", path, name), "must list at least one size");
    for (size_t i = 0; i < axis->size(); ++i) {
      const std::string field = fmt::format("{}.{}[{}]", path, name, i);
      if ((*axis)[i] < 1) fail(source, field, fmt::format("must be at least 1, got {}", (*axis)[i]));
      if (i > 0 && (*axis)[i] <= (*axis)[i - 1]) {
        fail(source, field, fmt::format("sizes must ascend, got {} after {}", (*axis)[i], (*axis)[i - 1]));
      }
    }
  }
  const size_t points = table.m.size() * table.n.size() * table.k.size();
  for (KernelPass pass : {KernelPass::forward, KernelPass::backward, KernelPass::weight_gradient}) {
    const std::string field = fmt::format("{}.{}", path, gemm_pass_key(pass));
    const std::vector<double>& values = table.of(pass);
    if (values.size() != points) {
      fail(source, field,
           fmt::format("must hold {} values (one per grid point: {} m x {} n x {} k), got {}", points, table.m.size(),
                       table.n.size(), table.k.size(), values.size()));
    }
    for (size_t i = 0; i < values.size(); ++i)
      require_range(values[i], 1e-6, 1.0, source, fmt::format("{}[{}]", field, i));
  }
}

// Devices per unit of level `level` (1 for level -1, the device itself).
int64_t block_size(const Cluster& cluster, int level) {
  int64_t block = 1;
  for (int i = 0; i <= level; ++i) block *= cluster.levels[static_cast<size_t>(i)].fan_out;
  return block;
}

std::vector<int> devices_of(const Cluster& cluster, std::span<const int> ranks) {
  std::vector<int> devices;
  devices.reserve(ranks.size());
  for (int rank : ranks) devices.push_back(device_of_rank(cluster, rank));
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    // A group lists each member once; a repeat is a bug in the caller, not bad input.
    throw std::invalid_argument(
        fmt::format("cluster '{}': a communication group names the same rank or device twice", cluster.name));
  }
  return devices;
}

}  // namespace

double Device::peak_flops_per_second(model::DType dtype) const {
  switch (dtype) {
    case model::DType::fp32:
      return peak_fp32_flops_per_second;
    case model::DType::fp16:
      return peak_fp16_flops_per_second;
    case model::DType::bf16:
      return peak_bf16_flops_per_second;
  }
  throw std::logic_error("unhandled DType");
}

const EfficiencyCurve& Device::efficiency(OpClass op_class) const {
  switch (op_class) {
    case OpClass::gemm:
      return gemm_efficiency;
    case OpClass::conv:
      return conv_efficiency;
    case OpClass::elementwise:
      return elementwise_efficiency;
  }
  throw std::logic_error("unhandled OpClass");
}

namespace {

const std::optional<EfficiencyCurve>& curve_of(const Device::BackwardCurves& curves, OpClass op_class) {
  switch (op_class) {
    case OpClass::gemm:
      return curves.gemm;
    case OpClass::conv:
      return curves.conv;
    case OpClass::elementwise:
      break;
  }
  return curves.elementwise;
}

}  // namespace

const EfficiencyCurve& Device::efficiency(OpClass op_class, KernelPass pass) const {
  if (pass == KernelPass::weight_gradient && curve_of(weight_gradient, op_class))
    return *curve_of(weight_gradient, op_class);
  if (pass != KernelPass::forward && curve_of(backward, op_class)) return *curve_of(backward, op_class);
  return efficiency(op_class);
}

const EfficiencyCurve& Device::memory_efficiency_of(KernelPass pass) const {
  return pass != KernelPass::forward && backward.memory ? *backward.memory : memory_efficiency;
}

const EfficiencyCurve& Device::memory_efficiency_of(KernelPass pass, model::OpKind kind) const {
  const auto it = op_memory_efficiency.find(kind);
  if (it == op_memory_efficiency.end()) return memory_efficiency_of(pass);
  return pass != KernelPass::forward && it->second.backward ? *it->second.backward : it->second.forward;
}

double SizeFactors::at(double bytes) const {
  if (factors.empty()) return 1.0;
  if (bytes <= buffer_bytes.front()) return factors.front();
  if (bytes >= buffer_bytes.back()) return factors.back();
  const auto above = std::upper_bound(buffer_bytes.begin(), buffer_bytes.end(), bytes);
  const auto i = static_cast<size_t>(above - buffer_bytes.begin());
  const double where = std::log(bytes / buffer_bytes[i - 1]) / std::log(buffer_bytes[i] / buffer_bytes[i - 1]);
  return factors[i - 1] + where * (factors[i] - factors[i - 1]);
}

double Link::bandwidth_at(double buffer_bytes) const {
  return bandwidth_bytes_per_second * bandwidth_factors.at(buffer_bytes);
}

const Link& Level::link_for(plans::CollectiveKind kind) const {
  const auto it = collective_links.find(kind);
  return it == collective_links.end() ? link : it->second;
}

int64_t device_count(const Cluster& cluster) {
  return block_size(cluster, static_cast<int>(cluster.levels.size()) - 1);
}

int rank_count(const Cluster& cluster) {
  if (!cluster.placement.empty()) return static_cast<int>(cluster.placement.size());
  // validate_cluster keeps the device count within int.
  return static_cast<int>(device_count(cluster));
}

int device_of_rank(const Cluster& cluster, int rank) {
  const int ranks = rank_count(cluster);
  if (rank < 0 || rank >= ranks) {
    throw ClusterError(
        fmt::format("cluster '{}': rank {} does not exist: the cluster has {} ranks", cluster.name, rank, ranks));
  }
  if (cluster.placement.empty()) return rank;
  return cluster.placement[static_cast<size_t>(rank)];
}

void validate_cluster(const Cluster& cluster, std::string_view source) {
  if (cluster.name.empty()) fail(source, "name", "must not be empty");
  const Device& device = cluster.device;
  if (device.name.empty()) fail(source, "device.name", "must not be empty");
  require_positive(device.peak_fp32_flops_per_second, source, "device.peak_flops_per_second.fp32");
  require_positive(device.peak_fp16_flops_per_second, source, "device.peak_flops_per_second.fp16");
  require_positive(device.peak_bf16_flops_per_second, source, "device.peak_flops_per_second.bf16");
  if (device.memory_capacity_bytes <= 0) fail(source, "device.memory_capacity_bytes", "must be positive");
  require_positive(device.memory_bandwidth_bytes_per_second, source, "device.memory_bandwidth_bytes_per_second");
  for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
    validate_curve(device.efficiency(op_class), source, fmt::format("device.efficiency.{}", op_class_name(op_class)),
                   "half_efficiency_flops");
  }
  validate_curve(device.memory_efficiency, source, "device.memory_efficiency", "half_efficiency_bytes");
  for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
    if (&device.efficiency(op_class, KernelPass::backward) == &device.efficiency(op_class)) continue;
    validate_curve(device.efficiency(op_class, KernelPass::backward), source,
                   fmt::format("device.backward_efficiency.{}", op_class_name(op_class)), "half_efficiency_flops");
  }
  if (device.backward.memory) {
    validate_curve(*device.backward.memory, source, "device.backward_memory_efficiency", "half_efficiency_bytes");
  }
  if (device.weight_gradient.gemm) {
    validate_curve(*device.weight_gradient.gemm, source, "device.weight_gradient_efficiency.gemm",
                   "half_efficiency_flops");
  }
  if (device.weight_gradient.conv) {
    validate_curve(*device.weight_gradient.conv, source, "device.weight_gradient_efficiency.conv",
                   "half_efficiency_output_pixels");
  }
  for (const auto& [kind, curves] : device.op_memory_efficiency) {
    const std::string path = fmt::format("device.op_memory_efficiency.{}", model::op_name(kind));
    validate_curve(curves.forward, source, path + ".forward", "half_efficiency_bytes");
    if (curves.backward) validate_curve(*curves.backward, source, path + ".backward", "half_efficiency_bytes");
  }
  for (const auto& [key, seconds] : device.measured_kernels) {
    const std::string path = fmt::format("device.measured_kernels['{}']", key);
    if (!(seconds.forward_seconds > 0.0)) fail(source, path + ".forward_seconds", "must be positive");
    require_range(seconds.forward_seconds, 0.0, kHighestSeconds, source, path + ".forward_seconds");
    // Layers without parameters have no weight gradient; the input layer's consumer needs none.
    require_range(seconds.backward_input_seconds, 0.0, kHighestSeconds, source, path + ".backward_input_seconds");
    require_range(seconds.backward_weight_seconds, 0.0, kHighestSeconds, source, path + ".backward_weight_seconds");
    require_range(seconds.forward_host_seconds, 0.0, kHighestSeconds, source, path + ".forward_host_seconds");
    require_range(seconds.backward_input_host_seconds, 0.0, kHighestSeconds, source,
                  path + ".backward_input_host_seconds");
    require_range(seconds.backward_weight_host_seconds, 0.0, kHighestSeconds, source,
                  path + ".backward_weight_host_seconds");
  }
  if (device.gemm_table) validate_gemm_table(*device.gemm_table, source);
  require_range(device.last_level_cache_bytes, 0.0, static_cast<double>(device.memory_capacity_bytes), source,
                "device.last_level_cache_bytes");
  if (!(cluster.communication_overlap >= -1.0 && cluster.communication_overlap <= 1.0)) {
    fail(source, "communication_overlap", "must be in [-1, 1]");
  }
  if (cluster.cpu_cores_per_node < 0) fail(source, "cpu_cores_per_node", "must be 0 (not known) or more");

  if (cluster.levels.empty()) fail(source, "levels", "must list at least one level");
  int64_t devices = 1;
  for (size_t i = 0; i < cluster.levels.size(); ++i) {
    const Level& level = cluster.levels[i];
    const std::string path = fmt::format("levels[{}]", i);
    if (level.name.empty()) fail(source, path + ".name", "must not be empty");
    for (size_t j = 0; j < i; ++j) {
      if (cluster.levels[j].name == level.name) {
        fail(source, path + ".name", fmt::format("'{}' is used by levels[{}] too", level.name, j));
      }
    }
    if (level.fan_out < 1) fail(source, path + ".fan_out", "must be at least 1 (a level of zero devices)");
    devices *= level.fan_out;
    if (devices > INT_MAX) fail(source, path + ".fan_out", "the cluster's device count exceeds 2^31-1");
    auto validate_link = [&](const Link& link, const std::string& link_path) {
      require_positive(link.bandwidth_bytes_per_second, source, link_path + ".bandwidth_bytes_per_second");
      require_range(link.latency_seconds, 0.0, kHighestSeconds, source, link_path + ".latency_seconds");
      const SizeFactors& by_size = link.bandwidth_factors;
      const std::string factors_path = link_path + ".bandwidth_factors";
      if (by_size.buffer_bytes.size() != by_size.factors.size()) {
        fail(source, factors_path, "buffer_bytes and factors must have the same length");
      }
      for (size_t k = 0; k < by_size.factors.size(); ++k) {
        require_range(by_size.factors[k], 1e-3, 1e3, source, fmt::format("{}.factors[{}]", factors_path, k));
        if (!(by_size.buffer_bytes[k] > (k == 0 ? 0.0 : by_size.buffer_bytes[k - 1]))) {
          fail(source, fmt::format("{}.buffer_bytes[{}]", factors_path, k), "must be positive and increasing");
        }
      }
    };
    validate_link(level.link, path + ".link");
    for (const auto& [key, overhead] : message_overheads_by_key(level)) {
      require_range(overhead->seconds, 0.0, kHighestSeconds, source, fmt::format("{}.{}.seconds", path, key));
      // Up to a microsecond per byte: 1 MB/s, slower than any copy or wire.
      require_range(overhead->seconds_per_byte, 0.0, 1e-6, source, fmt::format("{}.{}.seconds_per_byte", path, key));
    }
    for (const auto& [kind, link] : level.collective_links) {
      validate_link(link, fmt::format("{}.collective_links.{}", path, plans::collective_name(kind)));
    }
  }

  for (plans::CollectiveKind kind : kAlgorithmKinds) {
    const Algorithm algorithm = cluster.algorithms.for_kind(kind);
    if (!algorithm_supports(algorithm, kind)) {
      fail(
          source, fmt::format("algorithms.{}", plans::collective_name(kind)),
          fmt::format("algorithm '{}' does not implement {}", algorithm_name(algorithm), plans::collective_name(kind)));
    }
  }

  if (cluster.placement.empty()) return;
  std::vector<bool> used(static_cast<size_t>(devices), false);
  for (size_t r = 0; r < cluster.placement.size(); ++r) {
    const int device_index = cluster.placement[r];
    const std::string path = fmt::format("placement[{}]", r);
    if (device_index < 0 || device_index >= devices) {
      fail(source, path, fmt::format("device {} does not exist (the cluster has {})", device_index, devices));
    }
    if (used[static_cast<size_t>(device_index)]) {
      fail(source, path, fmt::format("device {} is given to two ranks", device_index));
    }
    used[static_cast<size_t>(device_index)] = true;
  }
}

GroupShape group_shape(const Cluster& cluster, std::span<const int> ranks) {
  const std::vector<int> devices = devices_of(cluster, ranks);
  GroupShape shape;
  if (devices.size() < 2) return shape;

  // The spanned level is the lowest one whose unit holds every member.
  const int levels = static_cast<int>(cluster.levels.size());
  for (int level = 0; level < levels && shape.spanned_level < 0; ++level) {
    const int64_t block = block_size(cluster, level);
    const int64_t unit = devices.front() / block;
    const bool together = std::all_of(devices.begin(), devices.end(), [&](int d) { return d / block == unit; });
    if (together) shape.spanned_level = level;
  }

  // fan_in[i]: distinct sub-units (level i-1) per level-i unit, maximised over units.
  for (int level = 0; level <= shape.spanned_level; ++level) {
    const int64_t block = block_size(cluster, level);
    const int64_t sub_block = block_size(cluster, level - 1);
    std::vector<std::pair<int64_t, int64_t>> units;
    units.reserve(devices.size());
    for (int d : devices) units.emplace_back(d / block, d / sub_block);
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
    int best = 0;
    for (size_t i = 0; i < units.size();) {
      size_t j = i;
      while (j < units.size() && units[j].first == units[i].first) ++j;
      best = std::max(best, static_cast<int>(j - i));
      i = j;
    }
    shape.fan_in.push_back(best);
  }
  return shape;
}

int level_spanned(const Cluster& cluster, std::span<const int> ranks) {
  return group_shape(cluster, ranks).spanned_level;
}

std::vector<Link> crossed_links(const Cluster& cluster, const GroupShape& shape, plans::CollectiveKind kind,
                                std::span<const int> groups_crossing) {
  std::vector<Link> links;
  for (int level = 0; level <= shape.spanned_level; ++level) {
    if (shape.fan_in[static_cast<size_t>(level)] < 2) continue;  // no traffic at this level
    const Level& spanned = cluster.levels[static_cast<size_t>(level)];
    Link link = spanned.link_for(kind);
    if (spanned.uplink_shared && !groups_crossing.empty()) {
      link.bandwidth_bytes_per_second /= std::max(1, groups_crossing[static_cast<size_t>(level)]);
    }
    links.push_back(link);
  }
  return links;
}

int64_t unit_of_device(const Cluster& cluster, int device, int level) { return device / block_size(cluster, level); }

double achieved_flops_per_second(const Cluster& cluster, OpClass op_class, model::DType dtype, double flops,
                                 KernelPass pass) {
  const Device& device = cluster.device;
  return device.peak_flops_per_second(dtype) * device.efficiency(op_class, pass).efficiency(flops);
}

double achieved_memory_bytes_per_second(const Cluster& cluster, double bytes, KernelPass pass) {
  const Device& device = cluster.device;
  return device.memory_bandwidth_bytes_per_second * device.memory_efficiency_of(pass).efficiency(bytes);
}

double achieved_memory_bytes_per_second(const Cluster& cluster, double bytes, KernelPass pass, model::OpKind kind) {
  const Device& device = cluster.device;
  return device.memory_bandwidth_bytes_per_second * device.memory_efficiency_of(pass, kind).efficiency(bytes);
}

}  // namespace splitbrain::sim
