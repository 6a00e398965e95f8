#pragma once
// Halo exchanges on fp32 blocks, moving and copying as little as the exchange needs. A height-split
// convolution computes on its block extended by its neighbours' boundary rows (halo_extend) and,
// in backward, sends the gradient of those halo rows back to the neighbours they belong to
// (halo_reduce). Both hand the collective engine only the 2 x halo_rows boundary rows of the
// block, not the block itself, and touch the block once: a copy into the extended array forward,
// a copy out of it backward (the simulator prices exactly these passes, sim/compute_cost.cc).
// Each moves the bytes the plan lists for the layer's halo_exchange; the caller counts them.

#include <cstdint>
#include <string_view>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "plans/collective.h"

namespace splitbrain::exec::comm {

// `block` extended by `halo_rows` rows on both sides of `dim`: the upper neighbour's last rows
// before it, the lower neighbour's first rows after it, zeros where the group has no neighbour.
LocalArray halo_extend(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& block, int dim,
                       int64_t halo_rows);

// The backward of the exchange: the gradient of the block alone, with what the neighbours
// computed for its boundary rows (their halo rows) added in. Counts the bytes under `label`.
LocalArray halo_reduce(Communicator& communicator, const plans::Collective& halo, const LocalArray& extended_gradient,
                       std::string_view label);

}  // namespace splitbrain::exec::comm
