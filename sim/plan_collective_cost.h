#pragma once
// The cost of a plan's collective (plans/collective.h) on a cluster: the bridge between the
// layout algebra's communication lists and the alpha-beta formulas of sim/collective_cost.h.
// Mesh rank r is cluster rank r; the cluster's placement then maps ranks to devices.

#include "plans/collective.h"
#include "plans/mesh.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// Seconds `collective` takes for the group that contains `rank`.
double plan_collective_seconds(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective,
                               int rank);

}  // namespace splitbrain::sim
