#pragma once
// The levels of the cluster file `calibrate` writes. On one host: one level, measured among all
// the ranks. On several hosts (a real cluster, or tools/emulate-nodes.sh): a node level measured
// among the ranks of each host, every host at once, and a cluster level measured among the first
// rank of each host while the other ranks sleep: the way out of a host, which the simulator
// shares among the groups that cross it at once.

#include <mpi.h>

#include <string>

#include "sim/cluster.h"
#include "tools/calibration/collective_calibration.h"
#include "tools/calibration/host_layout.h"

namespace splitbrain::tools {

struct MeasuredLevels {
  std::string summary;  // one line for the cluster file's description
  std::string source;   // how it was measured, for the cluster file's sources
};

// Replaces `cluster.levels` (and its communication overlap) by what the ranks of `world` measure,
// laid out on hosts as `layout` says. One rank on one host: nothing to measure, the levels stay.
// A level of one rank per group (one rank per host) keeps the base cluster's innermost link.
// Every rank returns with the same cluster (world rank 0's measurements).
MeasuredLevels calibrate_levels(const CollectiveCalibration& options, MPI_Comm world, const HostLayout& layout,
                                sim::Cluster& cluster);

}  // namespace splitbrain::tools
