#pragma once
// How many groups of one collective share a link. The groups of a mesh axis run their collective
// together (every rank executes the same step), so on a level whose uplink is shared
// (Level::uplink_shared: one network port per node) the groups that cross the level from one
// unit split that unit's port: a data-parallel all-reduce over groups {0, 2} and {1, 3} on two
// nodes of two ranks sends two streams through each node's port, one group {0, 1, 2, 3} one
// (a ring leaves a node once per step).

#include <span>
#include <vector>

#include "plans/mesh.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// groups_crossing[level], one entry per cluster level, for `group`, one of `groups` (all the
// groups that run the collective at once): the most groups that cross `level` out of one of the
// level-(level - 1) units `group` has members in; at least 1. A group crosses a level when its
// members sit in more than one of that level's sub-units inside one of its units.
std::vector<int> groups_crossing_levels(const Cluster& cluster, std::span<const std::vector<int>> groups,
                                        std::span<const int> group);

// The same for the group of `rank` along the mesh axes `axes` (every rank's group along them
// runs at once). All 1 (no work done) where no level's uplink is shared.
std::vector<int> groups_crossing_levels(const Cluster& cluster, const plans::Mesh& mesh, const std::vector<int>& axes,
                                        int rank);

}  // namespace splitbrain::sim
