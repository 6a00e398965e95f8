#pragma once
// Halo exchanges on fp32 blocks, moving as little as the exchange needs: only a block's 2 x
// halo_rows boundary rows go through the collective engine, never the block itself. A height-split
// convolution computes on its block extended by its neighbours' boundary rows and, in backward,
// sends the gradient of those halo rows back to the neighbours they belong to
// (exec/ops/halo_in_backend.h, which keeps the block in the backend's memory and hands this only
// the boundary rows). Each moves the bytes the plan lists for the layer's halo_exchange; the
// caller counts them.

#include <cstdint>
#include <string_view>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "plans/collective.h"

namespace splitbrain::exec::comm {

// What the neighbours along `dim` hold next to a block, given the block's `boundary`: its first
// `r` rows followed by its last `r` rows along `dim`. The engine's exchange of `boundary` sends
// the first rows up and the last rows down; what arrives is the upper neighbour's last `r` rows
// and the lower neighbour's first `r` rows (zeros where there is none).
struct NeighbourRows {
  LocalArray upper;
  LocalArray lower;
};
NeighbourRows exchange_boundary_rows(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& boundary,
                                     int dim, int64_t r);

// `block` extended by `halo_rows` rows on both sides of `dim`: the upper neighbour's last rows
// before it, the lower neighbour's first rows after it, zeros where the group has no neighbour.
LocalArray halo_extend(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& block, int dim,
                       int64_t halo_rows);

}  // namespace splitbrain::exec::comm
