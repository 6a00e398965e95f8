#include "sim/cluster_presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <filesystem>

#include "sim/cluster_error.h"
#include "sim/cluster_json.h"
#include "sim/embedded_cluster_presets.h"

namespace splitbrain::sim {
namespace {

constexpr int64_t kMaxNodes = 1 << 17;

// The preset part of "name:nodes=N".
std::string_view split_preset_name(std::string_view spec) { return spec.substr(0, spec.find(':')); }

std::string preset_list() {
  std::string list;
  for (const std::string& name : cluster_preset_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

const detail::EmbeddedClusterPreset* find_preset(std::string_view name) {
  for (const detail::EmbeddedClusterPreset& preset : detail::embedded_cluster_presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

// "name:nodes=N" -> ("name", N); a plain name -> (name, 0).
std::pair<std::string_view, int64_t> split_node_count(std::string_view spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return {spec, 0};
  const std::string_view name = spec.substr(0, colon);
  const std::string_view option = spec.substr(colon + 1);
  constexpr std::string_view kNodes = "nodes=";
  int64_t nodes = 0;
  const std::string_view digits = option.starts_with(kNodes) ? option.substr(kNodes.size()) : std::string_view{};
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), nodes);
  if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size() || nodes < 1 ||
      nodes > kMaxNodes) {
    throw ClusterError(fmt::format("cluster '{}': the only option is nodes=N, N from 1 to {} (e.g. '{}:nodes=384')",
                                   spec, kMaxNodes, name));
  }
  return {name, nodes};
}

}  // namespace

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const detail::EmbeddedClusterPreset& preset : detail::embedded_cluster_presets()) {
    names.emplace_back(preset.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Cluster cluster_preset(std::string_view spec) {
  const auto [name, nodes] = split_node_count(spec);
  const detail::EmbeddedClusterPreset* preset = find_preset(name);
  if (preset == nullptr) {
    throw ClusterError(fmt::format("unknown cluster preset '{}' (presets: {})", name, preset_list()));
  }
  // Parsed on every call: presets are small and this keeps no mutable global state.
  Cluster cluster =
      parse_cluster_json(preset->json_text, fmt::format("preset '{}' (sim/clusters/{}.json)", name, name));
  if (nodes == 0) return cluster;
  if (cluster.levels.size() != 2) {
    throw ClusterError(
        fmt::format("cluster '{}': nodes=N needs a preset of nodes and one network above them; '{}' has "
                    "{} level(s)",
                    spec, name, cluster.levels.size()));
  }
  cluster.levels.back().fan_out = static_cast<int>(nodes);
  cluster.name = std::string(spec);
  return cluster;
}

Cluster resolve_cluster(std::string_view name_or_path) {
  const std::string_view name = split_preset_name(name_or_path);
  if (find_preset(name) != nullptr && name != name_or_path) return cluster_preset(name_or_path);
  if (find_preset(name_or_path) != nullptr) return cluster_preset(name_or_path);
  const std::filesystem::path path(name_or_path);
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return read_cluster_file(path);
  throw ClusterError(
      fmt::format("'{}' is neither a cluster preset ({}) nor a cluster file", name_or_path, preset_list()));
}

}  // namespace splitbrain::sim
