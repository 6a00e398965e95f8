#pragma once
// Which ranks the bytes a rank sends in one run of a collective travel between: the one rule both
// the simulator (sim::add_bytes_per_level: bytes per cluster level) and the executor
// (exec::comm::Communicator: bytes within a host and across hosts) split a rank's bytes by, so
// the prediction and the measurement classify every message the same way.
//
//   send_recv      the pair {source, destination}; only the source sends (buffer_bytes).
//   halo_exchange  one span per existing neighbour, {this rank, neighbour}: halo_rows * row_bytes
//                  each (a chain in group order, each hop over its own pair's link).
//   the others     the whole group: their flat ring (or pairwise exchange) is costed at the
//                  outermost level any two members cross, so all of bytes_sent is counted there.

#include <cstdint>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"

namespace splitbrain::plans {

struct SentSpan {
  std::vector<int> ranks;  // mesh ranks the messages travel between, this rank included
  int64_t bytes = 0;       // bytes this rank sends among them in one run
};

// The spans of `rank`'s messages in one run of `collective` (rank's group: mesh.group(rank,
// collective.axes)). The bytes sum to bytes_sent(collective, rank's index); spans that carry no
// bytes are left out (an empty list when the rank sends nothing). PlanError for bad axes.
std::vector<SentSpan> sent_spans(const Mesh& mesh, const Collective& collective, int rank);

}  // namespace splitbrain::plans
