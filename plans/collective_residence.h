#pragma once
// Where a GPU's executor runs a collective: on the arrays' device memory, queued on its
// communication stream and ordered against the compute stream by events (the host queues it and
// goes on), or staged through host memory (the host copies the data out, waits for the
// collective, copies the result back). The CUDA backend runs on device memory every collective
// whose members' pieces its collective library can move as contiguous blocks once the device has
// cut them out and laid them in place (exec/runtime/collectives_in_device_memory.h): the sums,
// the gathers and scatters along any dimension, the all-to-alls; and so every layout
// redistribution. Halo exchanges (their boundary rows go through the host) are staged; pipeline
// hand-overs (point to point) run in NCCL groups on device memory where the plan's complete that
// way (plans/hand_over_groups.h), else staged. The executor (exec/cuda) picks its path with this
// function and the simulator decides with it whether the host waits at the instruction, so both
// read the same answer.

#include <span>

#include "plans/collective.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

// all_reduce, all_gather, reduce_scatter and all_to_all.
bool runs_on_device_memory(const Collective& collective);
// An instruction's collectives, each one's result the next one's input: at least one, and every
// one runs on device memory (the device holds what passes between the links).
bool runs_on_device_memory(std::span<const Collective> collectives);

// Whether a GPU's host goes on past `instruction` without waiting for its communication: a
// gradient bucket's reduction (`reduce`), ZeRO's gathers (`gather_params`, and a layer's parameter
// gather: a `redistribute` without steps) and a layout redistribution whose collectives all run on
// device memory (a redistribution's local steps are the device's copies), a pipeline hand-over
// (`send`, `recv`) where `grouped_hand_overs` (the plan's complete as NCCL groups:
// plans/hand_over_groups.h; else they are staged), and a `wait` for such an instruction of
// `program`.
bool host_goes_on(const StepProgram& program, const StepInstruction& instruction, bool grouped_hand_overs);

}  // namespace splitbrain::plans
