#include "sim/cluster_presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/cluster_error.h"
#include "sim/cluster_json.h"
#include "sim/embedded_cluster_presets.h"

namespace splitbrain::sim {
namespace {

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

}  // namespace

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const detail::EmbeddedClusterPreset& preset : detail::embedded_cluster_presets()) {
    names.emplace_back(preset.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Cluster cluster_preset(std::string_view name) {
  const detail::EmbeddedClusterPreset* preset = find_preset(name);
  if (preset == nullptr) {
    throw ClusterError(fmt::format("unknown cluster preset '{}' (presets: {})", name, preset_list()));
  }
  // Parsed on every call: presets are small and this keeps no mutable global state.
  return parse_cluster_json(preset->json_text, fmt::format("preset '{}' (sim/clusters/{}.json)", name, name));
}

Cluster resolve_cluster(std::string_view name_or_path) {
  if (find_preset(name_or_path) != nullptr) return cluster_preset(name_or_path);
  const std::filesystem::path path(name_or_path);
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return read_cluster_file(path);
  throw ClusterError(fmt::format("'{}' is neither a cluster preset ({}) nor a cluster file", name_or_path,
                                 preset_list()));
}

}  // namespace splitbrain::sim
