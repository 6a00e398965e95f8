#pragma once
// Runs the steps of plans::plan_redistribution on this rank: local steps cut (and, for a newly
// partial axis, zero) the rank's own block via plans::local_reslice; collective steps go through
// Communicator, which counts their bytes under `label`. Every rank of the mesh calls this with
// the same steps.

#include <cstdint>
#include <span>
#include <string_view>

#include "exec/comm/communicator.h"
#include "exec/comm/local_array.h"
#include "plans/redistribution.h"

namespace splitbrain::exec::comm {

// `local` is this rank's block in the first step's `before` layout of a tensor of `global_shape`;
// returns its block in the last step's `after` layout (a copy of `local` when there are no steps).
// Throws std::invalid_argument when `local`'s shape is not the layout's local shape.
LocalArray run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, const LocalArray& local, std::string_view label);

// The same for raw elements (LocalBytes): only steps without reductions can run this way.
LocalBytes run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, const LocalBytes& local, std::string_view label);

}  // namespace splitbrain::exec::comm
