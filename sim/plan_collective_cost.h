#pragma once
// The cost of a plan's collective (plans/collective.h) on a cluster: the bridge between the
// layout algebra's communication lists and the alpha-beta formulas of sim/collective_cost.h.
// Mesh rank r is cluster rank r; the cluster's placement then maps ranks to devices.

#include <cstdint>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// Seconds `collective` takes for the group that contains `rank`.
double plan_collective_seconds(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective,
                               int rank);

// The index of the outermost cluster level that `collective`'s traffic crosses in the group that
// contains `rank` (sim::level_spanned): the pair for send_recv, the whole group otherwise;
// -1 when no link is crossed (a group of one rank).
int plan_collective_level(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective,
                          int rank);

// Adds the bytes `rank` sends in one run of `collective` (plans::bytes_sent), times `count`,
// to bytes_per_level[level] of the level each message crosses: the pair's level for send_recv,
// each neighbour's level for halo_exchange, the group's level for the others (plans::sent_spans,
// the rule the executor's within-host / across-hosts count uses too). bytes_per_level has one
// entry per cluster level.
void add_bytes_per_level(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective, int rank,
                         int64_t count, std::vector<int64_t>& bytes_per_level);

}  // namespace splitbrain::sim
