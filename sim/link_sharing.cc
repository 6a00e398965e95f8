#include "sim/link_sharing.h"

#include <algorithm>
#include <map>
#include <set>

namespace splitbrain::sim {
namespace {

// The level-(level - 1) units a group crosses `level` from (none when it does not cross it).
std::set<int64_t> units_crossing(const Cluster& cluster, std::span<const int> group, int level) {
  const GroupShape shape = group_shape(cluster, group);
  if (level > shape.spanned_level || shape.fan_in[static_cast<size_t>(level)] < 2) return {};
  std::set<int64_t> units;
  for (const int rank : group) units.insert(unit_of_device(cluster, device_of_rank(cluster, rank), level - 1));
  return units;
}

}  // namespace

std::vector<int> groups_crossing_levels(const Cluster& cluster, std::span<const std::vector<int>> groups,
                                        std::span<const int> group) {
  std::vector<int> crossing(cluster.levels.size(), 1);
  for (size_t level = 0; level < cluster.levels.size(); ++level) {
    const std::set<int64_t> mine = units_crossing(cluster, group, static_cast<int>(level));
    if (mine.empty()) continue;
    std::map<int64_t, int> groups_per_unit;
    for (const std::vector<int>& other : groups) {
      for (const int64_t unit : units_crossing(cluster, other, static_cast<int>(level))) ++groups_per_unit[unit];
    }
    for (const int64_t unit : mine) crossing[level] = std::max(crossing[level], groups_per_unit[unit]);
  }
  return crossing;
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
