#include "sim/cluster_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/json_object_reader.h"
#include "model/file_io.h"
#include "sim/cluster_error.h"

namespace splitbrain::sim {
namespace {
using nlohmann::json;

// Every error from the shared reader is a ClusterError naming the source and the field path.
constexpr JsonErrorFactory kClusterError = throwing<ClusterError>;
// Far above any machine's, low enough to stay an int.
constexpr int64_t kMostCpuCoresPerNode = 1 << 20;
constexpr int64_t kMostOptimizerTensorsPerKernel = 1 << 20;

EfficiencyCurve read_curve(JsonObjectReader& parent, std::string_view key, std::string_view size_key) {
  JsonObjectReader reader = parent.object(key);
  EfficiencyCurve curve;
  curve.max_efficiency = reader.required_number("max_efficiency");
  curve.half_efficiency_size = reader.required_number(size_key);
  reader.reject_unknown_keys();
  return curve;
}

// The grid's axes and one flat array of efficiencies per pass (sim/gemm_table.h); the sizes and
// values are checked by validate_gemm_table.
GemmEfficiencyTable read_gemm_table(JsonObjectReader& device) {
  JsonObjectReader reader = device.object("gemm_table");
  GemmEfficiencyTable table;
  table.m = reader.required_int_list("m");
  table.n = reader.required_int_list("n");
  table.k = reader.required_int_list("k");
  for (KernelPass pass : {KernelPass::forward, KernelPass::backward, KernelPass::weight_gradient}) {
    const JsonArrayReader values = reader.array(gemm_pass_key(pass));
    for (size_t i = 0; i < values.size(); ++i) table.of(pass).push_back(values.number_at(i));
  }
  reader.reject_unknown_keys();
  return table;
}

Device read_device(JsonObjectReader& root) {
  JsonObjectReader reader = root.object("device");
  Device device;
  device.name = reader.required_string("name");
  {
    JsonObjectReader peak = reader.object("peak_flops_per_second");
    device.peak_fp32_flops_per_second = peak.required_number("fp32");
    device.peak_fp16_flops_per_second = peak.required_number("fp16");
    device.peak_bf16_flops_per_second = peak.required_number("bf16");
    peak.reject_unknown_keys();
  }
  device.memory_capacity_bytes = reader.required_int("memory_capacity_bytes");
  device.memory_bandwidth_bytes_per_second = reader.required_number("memory_bandwidth_bytes_per_second");
  {
    JsonObjectReader efficiency = reader.object("efficiency");
    device.gemm_efficiency = read_curve(efficiency, "gemm", "half_efficiency_flops");
    device.conv_efficiency = read_curve(efficiency, "conv", "half_efficiency_flops");
    device.elementwise_efficiency = read_curve(efficiency, "elementwise", "half_efficiency_flops");
    efficiency.reject_unknown_keys();
  }
  device.memory_efficiency = read_curve(reader, "memory_efficiency", "half_efficiency_bytes");
  if (reader.has("backward_efficiency")) {
    JsonObjectReader efficiency = reader.object("backward_efficiency");
    const std::pair<OpClass, std::optional<EfficiencyCurve>*> curves[] = {
        {OpClass::gemm, &device.backward.gemm},
        {OpClass::conv, &device.backward.conv},
        {OpClass::elementwise, &device.backward.elementwise}};
    for (const auto& [op_class, curve] : curves) {
      if (efficiency.has(op_class_name(op_class)))
        *curve = read_curve(efficiency, op_class_name(op_class), "half_efficiency_flops");
    }
    efficiency.reject_unknown_keys();
  }
  if (reader.has("backward_memory_efficiency")) {
    device.backward.memory = read_curve(reader, "backward_memory_efficiency", "half_efficiency_bytes");
  }
  if (reader.has("weight_gradient_efficiency")) {
    JsonObjectReader efficiency = reader.object("weight_gradient_efficiency");
    if (efficiency.has("gemm")) device.weight_gradient.gemm = read_curve(efficiency, "gemm", "half_efficiency_flops");
    if (efficiency.has("conv"))
      device.weight_gradient.conv = read_curve(efficiency, "conv", "half_efficiency_output_pixels");
    efficiency.reject_unknown_keys();
  }
  if (reader.has("op_memory_efficiency")) {
    const nlohmann::json& keys = reader.required("op_memory_efficiency");
    JsonObjectReader per_op = reader.object("op_memory_efficiency");
    for (const auto& item : keys.items()) {
      const std::string& key = item.key();
      const std::optional<model::OpKind> kind = model::op_kind_from_name(key);
      if (!kind) per_op.fail(key, "unknown op kind");
      JsonObjectReader curves = per_op.object(key);
      Device::OpMemoryCurves entry;
      entry.forward = read_curve(curves, "forward", "half_efficiency_bytes");
      if (curves.has("backward")) entry.backward = read_curve(curves, "backward", "half_efficiency_bytes");
      curves.reject_unknown_keys();
      device.op_memory_efficiency[*kind] = entry;
    }
  }
  if (std::optional<JsonArrayReader> kernels = reader.optional_array("measured_kernels")) {
    for (size_t i = 0; i < kernels->size(); ++i) {
      JsonObjectReader entry = kernels->object_at(i);
      Device::MeasuredKernel seconds;
      const std::string key = entry.required_string("problem");
      seconds.forward_seconds = entry.required_number("forward_seconds");
      seconds.backward_input_seconds = entry.required_number("backward_input_seconds");
      seconds.backward_weight_seconds = entry.required_number("backward_weight_seconds");
      seconds.forward_host_seconds = entry.optional_number("forward_host_seconds", 0.0);
      seconds.backward_input_host_seconds = entry.optional_number("backward_input_host_seconds", 0.0);
      seconds.backward_weight_host_seconds = entry.optional_number("backward_weight_host_seconds", 0.0);
      entry.reject_unknown_keys();
      if (!device.measured_kernels.emplace(key, seconds).second) entry.fail("problem", "listed twice");
    }
  }
  if (reader.has("gemm_table")) device.gemm_table = read_gemm_table(reader);
  device.last_level_cache_bytes = reader.optional_number("last_level_cache_bytes", 0.0);
  if (reader.has("host_transfer")) {
    JsonObjectReader host = reader.object("host_transfer");
    device.host_transfer_latency_seconds = host.required_number("latency_seconds");
    device.host_to_device_bytes_per_second = host.required_number("host_to_device_bytes_per_second");
    if (device.host_transfer_latency_seconds < 0.0) host.fail("latency_seconds", "must be zero or positive");
    if (device.host_to_device_bytes_per_second <= 0.0) host.fail("host_to_device_bytes_per_second", "must be positive");
    host.reject_unknown_keys();
  }
  device.launch_host_seconds = reader.optional_number("launch_host_seconds", 0.0);
  if (device.launch_host_seconds < 0.0) reader.fail("launch_host_seconds", "must be zero or positive");
  device.instruction_host_seconds = reader.optional_number("instruction_host_seconds", 0.0);
  if (device.instruction_host_seconds < 0.0) reader.fail("instruction_host_seconds", "must be zero or positive");
  const int64_t tensors_per_kernel = reader.optional_int("optimizer_tensors_per_kernel", 1);
  if (tensors_per_kernel < 1 || tensors_per_kernel > kMostOptimizerTensorsPerKernel) {
    reader.fail("optimizer_tensors_per_kernel", fmt::format("must be 1 to {}", kMostOptimizerTensorsPerKernel));
  }
  device.optimizer_tensors_per_kernel = static_cast<int>(tensors_per_kernel);
  reader.reject_unknown_keys();
  return device;
}

// The kinds a level may give its own link: every collective the cost model prices over a link.
constexpr plans::CollectiveKind kLinkKinds[] = {
    plans::CollectiveKind::all_gather, plans::CollectiveKind::reduce_scatter, plans::CollectiveKind::all_reduce,
    plans::CollectiveKind::all_to_all, plans::CollectiveKind::send_recv};

Link read_link(JsonObjectReader& reader) {
  Link link;
  link.bandwidth_bytes_per_second = reader.required_number("bandwidth_bytes_per_second");
  link.latency_seconds = reader.required_number("latency_seconds");
  if (reader.has("bandwidth_factors")) {
    JsonObjectReader by_size = reader.object("bandwidth_factors");
    const JsonArrayReader sizes = by_size.array("buffer_bytes");
    const JsonArrayReader factors = by_size.array("factors");
    for (size_t i = 0; i < sizes.size(); ++i) link.bandwidth_factors.buffer_bytes.push_back(sizes.number_at(i));
    for (size_t i = 0; i < factors.size(); ++i) link.bandwidth_factors.factors.push_back(factors.number_at(i));
    by_size.reject_unknown_keys();
  }
  reader.reject_unknown_keys();
  return link;
}

nlohmann::ordered_json link_json(const Link& link) {
  nlohmann::ordered_json out = {{"bandwidth_bytes_per_second", link.bandwidth_bytes_per_second},
                                {"latency_seconds", link.latency_seconds}};
  if (!link.bandwidth_factors.factors.empty()) {
    out["bandwidth_factors"] = {{"buffer_bytes", link.bandwidth_factors.buffer_bytes},
                                {"factors", link.bandwidth_factors.factors}};
  }
  return out;
}

std::vector<Level> read_levels(JsonObjectReader& root) {
  const JsonArrayReader array = root.array("levels");
  std::vector<Level> levels;
  for (size_t i = 0; i < array.size(); ++i) {
    JsonObjectReader reader = array.object_at(i);
    Level level;
    level.name = reader.required_string("name");
    level.fan_out = reader.required_int32("fan_out");
    JsonObjectReader link = reader.object("link");
    level.link = read_link(link);
    if (reader.has("collective_links")) {
      JsonObjectReader per_kind = reader.object("collective_links");
      for (plans::CollectiveKind kind : kLinkKinds) {
        if (!per_kind.has(plans::collective_name(kind))) continue;
        JsonObjectReader one = per_kind.object(plans::collective_name(kind));
        level.collective_links[kind] = read_link(one);
      }
      per_kind.reject_unknown_keys();
    }
    level.uplink_shared = reader.optional_bool("uplink_shared", false);
    for (const auto& [key, overhead] : message_overheads_by_key(level)) {
      if (!reader.has(key)) continue;
      JsonObjectReader one = reader.object(key);
      overhead->seconds = one.required_number("seconds");
      overhead->seconds_per_byte = one.required_number("seconds_per_byte");
      one.reject_unknown_keys();
    }
    reader.reject_unknown_keys();
    levels.push_back(std::move(level));
  }
  return levels;
}

CollectiveAlgorithms read_algorithms(JsonObjectReader& root) {
  JsonObjectReader reader = root.object("algorithms");
  CollectiveAlgorithms algorithms;
  for (plans::CollectiveKind kind : kAlgorithmKinds) {
    const std::string_view key = plans::collective_name(kind);
    const std::string name = reader.required_string(key);
    const std::optional<Algorithm> algorithm = algorithm_from_name(name);
    if (!algorithm) {
      reader.fail(key, fmt::format("unknown algorithm '{}' (expected one of: ring, tree, "
                                   "recursive_doubling, bruck, hierarchical, pairwise)",
                                   name));
    }
    algorithms.for_kind(kind) = *algorithm;
  }
  reader.reject_unknown_keys();
  return algorithms;
}

nlohmann::ordered_json curve_json(const EfficiencyCurve& curve, std::string_view size_key) {
  nlohmann::ordered_json out;
  out["max_efficiency"] = curve.max_efficiency;
  out[std::string(size_key)] = curve.half_efficiency_size;
  return out;
}

}  // namespace

Cluster cluster_from_json(const json& document, std::string_view source) {
  JsonObjectReader root(document, std::string(source), kClusterError);
  const std::string format = root.required_string("format");
  if (format != kClusterFormatName) {
    root.fail("format", fmt::format("expected \"{}\", got \"{}\"", kClusterFormatName, format));
  }
  const int64_t version = root.required_int("version");
  if (version != kClusterFormatVersion) {
    root.fail("version",
              fmt::format("unsupported version {} (this build reads version {})", version, kClusterFormatVersion));
  }
  Cluster cluster;
  cluster.name = root.required_string("name");
  cluster.description = root.required_string("description");
  if (const std::optional<JsonArrayReader> sources = root.optional_array("sources")) {
    for (size_t i = 0; i < sources->size(); ++i) cluster.sources.push_back(sources->string_at(i));
  }
  cluster.device = read_device(root);
  cluster.levels = read_levels(root);
  cluster.algorithms = read_algorithms(root);
  cluster.communication_overlap = root.optional_number("communication_overlap", 1.0);
  const int64_t cpu_cores = root.optional_int("cpu_cores_per_node", 0);
  if (cpu_cores < 0 || cpu_cores > kMostCpuCoresPerNode) {
    root.fail("cpu_cores_per_node", fmt::format("must be 0 (not known) to {}", kMostCpuCoresPerNode));
  }
  cluster.cpu_cores_per_node = static_cast<int>(cpu_cores);
  if (const std::optional<JsonArrayReader> placement = root.optional_array("placement")) {
    for (size_t i = 0; i < placement->size(); ++i) cluster.placement.push_back(placement->int32_at(i));
  }
  root.reject_unknown_keys();
  validate_cluster(cluster, source);
  return cluster;
}

Cluster parse_cluster_json(std::string_view text, std::string_view source) {
  return cluster_from_json(parse_json_strict(text, source, kClusterError), source);
}

Cluster read_cluster_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClusterError(fmt::format("{}: cannot open cluster file: {}", source, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ClusterError(fmt::format("{}: cannot read cluster file", source));
  return parse_cluster_json(text.str(), source);
}

}  // namespace splitbrain::sim

namespace splitbrain::sim {

nlohmann::ordered_json cluster_to_json(const Cluster& cluster) {
  using nlohmann::ordered_json;
  ordered_json out;
  out["format"] = kClusterFormatName;
  out["version"] = kClusterFormatVersion;
  out["name"] = cluster.name;
  out["description"] = cluster.description;
  out["sources"] = cluster.sources;

  const Device& device = cluster.device;
  ordered_json device_json;
  device_json["name"] = device.name;
  device_json["peak_flops_per_second"] = {{"fp32", device.peak_fp32_flops_per_second},
                                          {"fp16", device.peak_fp16_flops_per_second},
                                          {"bf16", device.peak_bf16_flops_per_second}};
  device_json["memory_capacity_bytes"] = device.memory_capacity_bytes;
  device_json["memory_bandwidth_bytes_per_second"] = device.memory_bandwidth_bytes_per_second;
  ordered_json efficiency;
  for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
    efficiency[std::string(op_class_name(op_class))] = curve_json(device.efficiency(op_class), "half_efficiency_flops");
  }
  device_json["efficiency"] = std::move(efficiency);
  device_json["memory_efficiency"] = curve_json(device.memory_efficiency, "half_efficiency_bytes");
  ordered_json backward_efficiency = ordered_json::object();
  for (OpClass op_class : {OpClass::gemm, OpClass::conv, OpClass::elementwise}) {
    const EfficiencyCurve& curve = device.efficiency(op_class, KernelPass::backward);
    if (&curve != &device.efficiency(op_class)) {
      backward_efficiency[std::string(op_class_name(op_class))] = curve_json(curve, "half_efficiency_flops");
    }
  }
  if (!backward_efficiency.empty()) device_json["backward_efficiency"] = std::move(backward_efficiency);
  if (device.backward.memory) {
    device_json["backward_memory_efficiency"] = curve_json(*device.backward.memory, "half_efficiency_bytes");
  }
  ordered_json weight_gradient = ordered_json::object();
  if (device.weight_gradient.gemm)
    weight_gradient["gemm"] = curve_json(*device.weight_gradient.gemm, "half_efficiency_flops");
  if (device.weight_gradient.conv)
    weight_gradient["conv"] = curve_json(*device.weight_gradient.conv, "half_efficiency_output_pixels");
  if (!weight_gradient.empty()) device_json["weight_gradient_efficiency"] = std::move(weight_gradient);
  if (!device.op_memory_efficiency.empty()) {
    ordered_json per_op;
    for (const auto& [kind, curves] : device.op_memory_efficiency) {
      ordered_json entry;
      entry["forward"] = curve_json(curves.forward, "half_efficiency_bytes");
      if (curves.backward) entry["backward"] = curve_json(*curves.backward, "half_efficiency_bytes");
      per_op[std::string(model::op_name(kind))] = std::move(entry);
    }
    device_json["op_memory_efficiency"] = std::move(per_op);
  }
  if (!device.measured_kernels.empty()) {
    ordered_json kernels = ordered_json::array();
    for (const auto& [key, seconds] : device.measured_kernels) {
      ordered_json entry = {{"problem", key},
                            {"forward_seconds", seconds.forward_seconds},
                            {"backward_input_seconds", seconds.backward_input_seconds},
                            {"backward_weight_seconds", seconds.backward_weight_seconds}};
      if (seconds.forward_host_seconds > 0.0 || seconds.backward_input_host_seconds > 0.0 ||
          seconds.backward_weight_host_seconds > 0.0) {
        entry["forward_host_seconds"] = seconds.forward_host_seconds;
        entry["backward_input_host_seconds"] = seconds.backward_input_host_seconds;
        entry["backward_weight_host_seconds"] = seconds.backward_weight_host_seconds;
      }
      kernels.push_back(std::move(entry));
    }
    device_json["measured_kernels"] = std::move(kernels);
  }
  if (device.last_level_cache_bytes > 0.0) device_json["last_level_cache_bytes"] = device.last_level_cache_bytes;
  if (device.host_to_device_bytes_per_second > 0.0) {
    device_json["host_transfer"] = {{"latency_seconds", device.host_transfer_latency_seconds},
                                    {"host_to_device_bytes_per_second", device.host_to_device_bytes_per_second}};
  }
  if (device.launch_host_seconds > 0.0) device_json["launch_host_seconds"] = device.launch_host_seconds;
  if (device.instruction_host_seconds > 0.0) device_json["instruction_host_seconds"] = device.instruction_host_seconds;
  if (device.optimizer_tensors_per_kernel != 1) {
    device_json["optimizer_tensors_per_kernel"] = device.optimizer_tensors_per_kernel;
  }
  if (device.gemm_table) {
    const GemmEfficiencyTable& table = *device.gemm_table;
    ordered_json table_json;
    table_json["m"] = table.m;
    table_json["n"] = table.n;
    table_json["k"] = table.k;
    for (KernelPass pass : {KernelPass::forward, KernelPass::backward, KernelPass::weight_gradient}) {
      table_json[std::string(gemm_pass_key(pass))] = table.of(pass);
    }
    device_json["gemm_table"] = std::move(table_json);
  }
  out["device"] = std::move(device_json);

  ordered_json levels = ordered_json::array();
  for (const Level& level : cluster.levels) {
    ordered_json level_json;
    level_json["name"] = level.name;
    level_json["fan_out"] = level.fan_out;
    level_json["link"] = link_json(level.link);
    if (!level.collective_links.empty()) {
      ordered_json per_kind;
      for (const auto& [kind, link] : level.collective_links)
        per_kind[std::string(plans::collective_name(kind))] = link_json(link);
      level_json["collective_links"] = std::move(per_kind);
    }
    if (level.uplink_shared) level_json["uplink_shared"] = true;
    for (const auto& [key, overhead] : message_overheads_by_key(level)) {
      if (*overhead == MessageOverhead{}) continue;
      level_json[key] = {{"seconds", overhead->seconds}, {"seconds_per_byte", overhead->seconds_per_byte}};
    }
    levels.push_back(std::move(level_json));
  }
  out["levels"] = std::move(levels);

  ordered_json algorithms;
  for (plans::CollectiveKind kind : kAlgorithmKinds) {
    algorithms[std::string(plans::collective_name(kind))] = algorithm_name(cluster.algorithms.for_kind(kind));
  }
  out["algorithms"] = std::move(algorithms);
  if (cluster.communication_overlap != 1.0) out["communication_overlap"] = cluster.communication_overlap;
  if (!cluster.placement.empty()) out["placement"] = cluster.placement;
  if (cluster.cpu_cores_per_node > 0) out["cpu_cores_per_node"] = cluster.cpu_cores_per_node;
  return out;
}

std::string cluster_json_text(const Cluster& cluster) { return cluster_to_json(cluster).dump(2) + "\n"; }

void write_cluster_file(const Cluster& cluster, const std::filesystem::path& path) {
  write_file_atomically(path, cluster_json_text(cluster));  // never half a file: temp, then rename
}

}  // namespace splitbrain::sim
