#pragma once
// Where a GPU's executor runs a collective: on the arrays' device memory, queued on its
// communication stream and ordered against the compute stream by events (the host queues it and
// goes on), or staged through host memory (the host copies the data out, waits for the
// collective, copies the result back). The CUDA backend runs on device memory what its collective
// library lays out as the runtime does: the element-wise sums, and the gathers and scatters of
// whole leading rows, where each member's piece is one contiguous block of the array; everything
// else (all-to-all, halo exchange, point to point, splits of inner dimensions) is staged. The
// executor (exec/cuda) picks its path with this function and the simulator decides with it
// whether the host waits at the instruction, so both read the same answer.

#include <span>

#include "plans/collective.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

// all_reduce; all_gather and reduce_scatter along dimension 0.
bool runs_on_device_memory(const Collective& collective);
// An instruction's collectives, each one's result the next one's input: exactly one, which runs on
// device memory (a chain would need arrays the step program does not hold between its links).
bool runs_on_device_memory(std::span<const Collective> collectives);

// Whether a GPU's host goes on past `instruction` without waiting for its communication: a
// gradient bucket's reduction (`reduce`), ZeRO's gathers (`gather_params`, and a layer's parameter
// gather: a `redistribute` without steps) whose collectives all run on device memory, and a `wait`
// for such an instruction of `program`. Layout redistributions and pipeline hand-overs are staged.
bool host_goes_on(const StepProgram& program, const StepInstruction& instruction);

}  // namespace splitbrain::plans
