#pragma once
// Arrays the runtime holds (the backend's, device.h), counted in the memory tracker for as long
// as they live. Shared ownership: a gathered parameter is the program's buffer and, while it
// lives, also the layer's model state, counted once.

#include <memory>
#include <vector>

#include "exec/runtime/device_memory.h"
#include "exec/runtime/memory_tracker.h"

namespace splitbrain::exec {

using TrackedArray = std::shared_ptr<DeviceArray>;

// A new array of `shape` on `device` (zeros, or undefined until written whole), counted under
// `category` from now on until its last owner lets go, at `element_bytes` per element: 4, the
// arrays' fp32 storage, or 2 for a bf16 plan's values, which the CPU emulates in fp32 storage and
// the simulator counts at bf16's size (mixed_precision.h).
TrackedArray make_tracked(DeviceMemory& device, MemoryTracker& memory, MemoryCategory category,
                          std::vector<int64_t> shape, bool zeroed = true, int64_t element_bytes = 4);

}  // namespace splitbrain::exec
