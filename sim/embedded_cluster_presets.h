#pragma once
// Internal: the preset JSON texts, generated at build time from sim/clusters/*.json into
// <build>/sim/embedded_cluster_presets.cc by sim/embed_cluster_presets.cmake.

#include <span>
#include <string_view>

namespace splitbrain::sim::detail {

struct EmbeddedClusterPreset {
  std::string_view name;  // the file name without ".json"
  std::string_view json_text;
};

// In the order the CMake list names the files.
std::span<const EmbeddedClusterPreset> embedded_cluster_presets();

}  // namespace splitbrain::sim::detail
