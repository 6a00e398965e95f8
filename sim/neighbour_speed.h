#pragma once
// The device's curves as the node's other ranks leave them. `splitbrain calibrate` fits the rates
// of its curves with every rank of a node computing at once; a rank whose neighbours spend part
// of the step waiting runs faster than that. The kernel problems calibrate timed both ways ("1
// busy" and "N busy") say by how much, and the curves are moved toward their rates alone by the
// share of the step the neighbours do not compute, as the timed problems are
// (NodeConditions::neighbours_busy).

#include "sim/cluster.h"

namespace splitbrain::sim {

// How many times faster the node's kernels run alone than with `busy_ranks` ranks of the node
// computing: the median over the problems measured both ways of their seconds busy over alone
// (forward and both backward passes together). 1 where none was measured both ways.
double alone_speedup(const Device& device, int busy_ranks);

// `cluster` with its peak FLOP rates and memory bandwidth (and so every curve on them) raised
// toward `speedup` (alone_speedup's, found once per plan) in proportion to 1 - `neighbours_busy`,
// in [0, 1]. The timed problems keep their own seconds: they are interpolated where they are read.
Cluster with_neighbours_busy(const Cluster& cluster, double speedup, double neighbours_busy);

}  // namespace splitbrain::sim
