#pragma once
// How a job's ranks sit on hosts, as `calibrate` measures a two-level cluster: the ranks of one
// host form the node level's groups, and the ranks at the same position on their hosts (one rank
// per host) form the cluster level's groups, as a mesh axis that spans the nodes does.

#include <string>
#include <vector>

namespace splitbrain::tools {

struct HostLayout {
  std::vector<std::string> hosts;  // in the order of their lowest rank
  int ranks_per_host = 0;
  std::vector<int> host_of_rank;      // per world rank, an index into `hosts`
  std::vector<int> position_on_host;  // per world rank, 0 .. ranks_per_host - 1 in rank order
};

// From each world rank's host name. InputError when the hosts hold different numbers of ranks
// (a level's fan-out is one number), naming two hosts and their counts; std::invalid_argument
// for no ranks.
HostLayout host_layout(const std::vector<std::string>& host_name_of_rank);

}  // namespace splitbrain::tools
