#pragma once
// Where a rank's messages go, as the executor can tell from where the ranks run: within this
// rank's host (every rank the message travels between shares its host name) or across hosts.
// The ranks a message travels between come from plans::sent_spans, the rule the simulator's
// sim::add_bytes_per_level splits the prediction by (the pair for send_recv, each neighbour for
// halo_exchange, the whole group for the others), so on a cluster whose innermost level is one
// host, within_host is the prediction's level 0 and across_hosts the sum of the levels above.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"

namespace splitbrain::exec::comm {

enum class HostLevel { within_host = 0, across_hosts = 1 };
inline constexpr int kHostLevelCount = 2;

// "within_host", "across_hosts": the keys of the run report's comm_bytes_sent_per_host_level.
const char* host_level_name(HostLevel level);

// within_host when every rank in `ranks` runs on the same host as the first (host_of_rank[r] is
// world rank r's host name); across_hosts otherwise. std::out_of_range for a rank without a host.
HostLevel host_level(std::span<const int> ranks, const std::vector<std::string>& host_of_rank);

// Bytes indexed by HostLevel.
using HostLevelBytes = std::array<int64_t, kHostLevelCount>;

// The bytes `rank` sends in one run of `collective`, split by host level (mesh rank = world rank).
HostLevelBytes bytes_by_host_level(const plans::Mesh& mesh, const plans::Collective& collective, int rank,
                                   const std::vector<std::string>& host_of_rank);

}  // namespace splitbrain::exec::comm
