#pragma once
// How a node's ranks slow each other. `splitbrain calibrate` fits the rates of its curves with
// every rank of a node computing at once, and times the kernel problems both that way ("N busy")
// and alone ("1 busy"). From those: the speed-up alone, the curves at a rank's rate alone, and how
// many cores the node's ranks compute on (fewer than ranks: they take turns), for the timeline.

#include <optional>

#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/program_timeline.h"

namespace splitbrain::sim {

// How many times faster the node's kernels run alone than with `busy_ranks` ranks of the node
// computing: the median over the problems measured both ways of their seconds busy over alone
// (forward and both backward passes together). 1 where none was measured both ways.
double alone_speedup(const Device& device, int busy_ranks);

// `cluster` with its peak FLOP rates and memory bandwidth (and so every curve on them) raised
// toward `speedup` (alone_speedup's, found once per plan) in proportion to 1 - `neighbours_busy`,
// in [0, 1]. The timed problems keep their own seconds: they are interpolated where they are read.
Cluster with_neighbours_busy(const Cluster& cluster, double speedup, double neighbours_busy);

// How the plan's ranks share the cores of the cluster's nodes, for the timeline to schedule their
// compute; none where calibrate measured no problem both alone and busy, or a node holds one rank.
// The node's cores are the cluster's cpu_cores_per_node where calibrate recorded it; else what
// its N busy ranks achieve together in ranks alone (N over the median speed-up alone, `speedup`:
// alone_speedup's for the node's ranks, found once per plan, rounded). Ranks beyond them take
// turns; the others run at the busy seconds while all compute (contention, not turns).
std::optional<NodeSharing> node_sharing(const Cluster& cluster, const plans::Plan& plan, double speedup);

}  // namespace splitbrain::sim
