#pragma once
// The plan's collectives and layout redistributions on arrays that stay in the backend's memory.
// A collective library moves contiguous pieces (NCCL: a whole array summed, the members' pieces
// one after another gathered, scattered or exchanged); a split along an inner dimension makes each
// member's piece a set of rows in every plane. So the device cuts the pieces out with row copies
// into a flat array, the flat collective moves them (DeviceCollectives::start_all_reduce,
// all_gather, start_reduce_scatter, all_to_all), and row copies lay what arrives into place; where the pieces
// are contiguous already (a split of the leading dimension) the collective runs on the arrays
// themselves. A redistribution's local steps are row copies too (and a fill of zeros for a newly
// partial axis). Nothing goes through the host.
//
// A GPU with NCCL runs the plan's collectives this way, the host never waiting; the CPU's test
// device (tests/exec/equivalence/scrambled_device.h) does too, so every family's equivalence
// suite checks this path against the host's (Communicator::run, comm/redistribution_runner.h),
// and tests/exec/runtime/collectives_in_device_memory_mpi_test.cc every layout pair. Each
// collective is checked and counted by the communicator exactly as the host path does.

#include <cstdint>
#include <span>
#include <string_view>

#include "exec/comm/communicator.h"
#include "exec/runtime/device.h"
#include "plans/collective.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {

// The two concerns of a device this path works through: its memory (the row copies, fills and
// flat arrays) and its flat collectives. A device's collectives concern passes itself and its
// memory concern; anything else passes the whole Device.
struct MemoryAndCollectives {
  MemoryAndCollectives(DeviceMemory& memory_concern, DeviceCollectives& collectives_concern)
      : memory(memory_concern), collectives(collectives_concern) {}
  MemoryAndCollectives(Device& whole)  // NOLINT(google-explicit-constructor): a Device is both
      : memory(whole.memory()), collectives(whole.collectives()) {}
  DeviceMemory& memory;
  DeviceCollectives& collectives;
};

// The collectives in turn, each one's result the next one's input, from `input` (of its shape)
// into `output` (the last result's elements); every one of a kind plans::runs_on_device_memory
// accepts (std::logic_error otherwise), counted under `label`.
void run_collectives_in_device_memory(MemoryAndCollectives device, comm::Communicator& communicator,
                                      std::span<const plans::Collective> collectives, const DeviceArray& input,
                                      DeviceArray& output, std::string_view label);

// plans::plan_redistribution's steps from `input` (this rank's block of a tensor of
// `global_shape` in the first step's `before` layout) into `output` (its block in the last
// step's `after` layout), as comm::run_redistribution does on host arrays.
void redistribute_in_device_memory(MemoryAndCollectives device, comm::Communicator& communicator,
                                   std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, const DeviceArray& input, DeviceArray& output,
                                   std::string_view label);

}  // namespace splitbrain::exec
