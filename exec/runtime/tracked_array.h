#pragma once
// Activations and gradients the runtime holds, counted in the memory tracker for as long as
// they live. Shared ownership: when a layer reads its producer's output unchanged (no
// redistribution), it keeps the same array, so memory is counted once, as the simulator does.

#include <memory>
#include <vector>

#include "exec/comm/local_array.h"
#include "exec/runtime/memory_tracker.h"

namespace splitbrain::exec {

using TrackedArray = std::shared_ptr<comm::LocalArray>;

// A zero-filled array of `shape`, counted under `category` until its last owner lets go.
TrackedArray make_tracked(MemoryTracker& memory, MemoryCategory category, std::vector<int64_t> shape);
// Takes over `array` (e.g. the result of a redistribution), counted under `category`.
TrackedArray adopt_tracked(MemoryTracker& memory, MemoryCategory category, comm::LocalArray array);
// An array of `shape` whose values are still to come (no storage yet: whatever fills it moves
// its own in), counted as the whole array from now on, so the count does not wait for the fill.
TrackedArray make_unfilled_tracked(MemoryTracker& memory, MemoryCategory category, std::vector<int64_t> shape);

}  // namespace splitbrain::exec
