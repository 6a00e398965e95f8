#include "sim/link_sharing.h"

#include <algorithm>
#include <map>
#include <set>

namespace splitbrain::sim {
namespace {

// crossing[level]: the level-(level - 1) units the group crosses `level` from (none where it does
// not cross it).
std::vector<std::set<int64_t>> units_crossing(const Cluster& cluster, std::span<const int> group) {
  const GroupShape shape = group_shape(cluster, group);
  std::vector<std::set<int64_t>> crossing(cluster.levels.size());
  for (int level = 0; level <= shape.spanned_level; ++level) {
    if (shape.fan_in[static_cast<size_t>(level)] < 2) continue;
    for (const int rank : group) {
      crossing[static_cast<size_t>(level)].insert(unit_of_device(cluster, device_of_rank(cluster, rank), level - 1));
    }
  }
  return crossing;
}

}  // namespace

std::vector<int> groups_crossing_levels(const Cluster& cluster, std::span<const std::vector<int>> groups,
                                        std::span<const int> group) {
  std::vector<std::map<int64_t, int>> groups_per_unit(cluster.levels.size());
  for (const std::vector<int>& other : groups) {
    const std::vector<std::set<int64_t>> crossing = units_crossing(cluster, other);
    for (size_t level = 0; level < crossing.size(); ++level) {
      for (const int64_t unit : crossing[level]) ++groups_per_unit[level][unit];
    }
  }
  const std::vector<std::set<int64_t>> mine = units_crossing(cluster, group);
  std::vector<int> most(cluster.levels.size(), 1);
  for (size_t level = 0; level < mine.size(); ++level) {
    for (const int64_t unit : mine[level]) most[level] = std::max(most[level], groups_per_unit[level][unit]);
  }
  return most;
}

std::vector<int> groups_crossing_levels(const Cluster& cluster, const plans::Mesh& mesh, const std::vector<int>& axes,
                                        int rank) {
  const bool shared =
      std::any_of(cluster.levels.begin(), cluster.levels.end(), [](const Level& level) { return level.uplink_shared; });
  if (!shared) return std::vector<int>(cluster.levels.size(), 1);
  std::vector<std::vector<int>> groups;
  std::set<int> seen;
  int ranks = 1;
  for (const plans::MeshAxis& axis : mesh.axes()) ranks *= axis.size;
  for (int r = 0; r < ranks; ++r) {
    if (seen.contains(r)) continue;
    groups.push_back(mesh.group(r, axes));
    seen.insert(groups.back().begin(), groups.back().end());
  }
  return groups_crossing_levels(cluster, groups, mesh.group(rank, axes));
}

}  // namespace splitbrain::sim
