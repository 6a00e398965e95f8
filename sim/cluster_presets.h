#pragma once
// The shipped cluster presets. Their JSON files live in sim/clusters/ and are compiled into the
// library at build time (sim/embed_cluster_presets.cmake), so the binary finds them from any
// working directory and an installed binary needs no data files.

#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.h"

namespace splitbrain::sim {

// Sorted preset names: "cori-knl", "dgx-a100-80g", "dgx-h100", "local-cpu", "v100-pcie-10gbe".
std::vector<std::string> cluster_preset_names();

// The preset called `name`, or "name:nodes=N": the preset with N nodes (its outer network's
// fan-out; presets of nodes and one network above them). Throws ClusterError listing the
// presets when there is none, or naming the option when it is wrong.
Cluster cluster_preset(std::string_view name);

// A preset name (with its options), else a path to a cluster file. A preset name wins over a file of the same name
// in the working directory (write "./dgx-h100" for the file). Throws ClusterError listing the
// presets when `name_or_path` is neither.
Cluster resolve_cluster(std::string_view name_or_path);

}  // namespace splitbrain::sim
