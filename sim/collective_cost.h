#pragma once
// Seconds that one collective takes on a cluster, by the alpha-beta model: a message of m bytes
// over a link costs alpha + m * beta, with alpha = latency_seconds and beta = 1 / bandwidth.
// The formula per algorithm, with its source, is in collective_cost.cc.
//
// buffer_bytes follows nccl-tests' "size" convention, so a measured nccl-tests row and a
// predicted one describe the same collective:
//   all_reduce      the array (every rank holds and ends with S bytes)
//   all_gather      the gathered output (every rank ends with S; it contributed S/n)
//   reduce_scatter  the input each rank holds (every rank ends with S/n)
//   all_to_all      the local buffer (each rank holds S: n blocks of S/n, one per destination)
//   halo_exchange   the bytes a rank sends to ONE neighbour (one side's halo)
//   send_recv       the message
// A group of one rank, or a buffer of zero bytes, costs 0 seconds.

#include <cstdint>
#include <span>

#include "plans/collective_kind.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// The cost of `kind` over `ranks` with the algorithm the cluster assigns to that kind.
// Flat algorithms are costed with each link the group crosses (crossed_links), the slowest wins;
// `hierarchical` composes the levels. Throws ClusterError for a rank the cluster lacks and
// std::invalid_argument for a repeated rank or negative bytes.
// groups_crossing: for levels whose uplink is shared, how many groups cross each level at once
// (sim/link_sharing.h); empty: the group has every link to itself.
double collective_seconds(const Cluster& cluster, plans::CollectiveKind kind, std::span<const int> ranks,
                          int64_t buffer_bytes, std::span<const int> groups_crossing = {});

// The same with an explicit algorithm (to compare algorithms; the cluster's choice is ignored).
// Throws std::invalid_argument when `algorithm` does not implement `kind`.
double collective_seconds(const Cluster& cluster, plans::CollectiveKind kind, Algorithm algorithm,
                          std::span<const int> ranks, int64_t buffer_bytes, std::span<const int> groups_crossing = {});

// One flat algorithm's formula for n ranks whose every step crosses `link`.
double flat_collective_seconds(plans::CollectiveKind kind, Algorithm algorithm, int n, double buffer_bytes,
                               const Link& link);

// Point to point: alpha + bytes / bandwidth of the level the pair crosses; 0 for from == to.
double send_seconds(const Cluster& cluster, int from_rank, int to_rank, int64_t bytes);

// Halo exchange along a spatially split dimension. `ranks` is the chain in split order (not
// periodic); every rank swaps bytes_per_neighbour with each neighbour. Choice: both neighbours
// IN PARALLEL - a rank's left and right exchanges overlap, and links are full duplex - so the
// cost is the slowest single neighbour send, max over adjacent pairs of send_seconds. This is
// Gholami et al.'s alpha + beta * halo term (SPAA 2018, eq. 7); a device whose injection
// bandwidth is shared by its two sends would take up to one more beta * halo.
double halo_exchange_seconds(const Cluster& cluster, std::span<const int> ranks, int64_t bytes_per_neighbour);

}  // namespace splitbrain::sim
