#pragma once
// Whether a step's pipeline hand-overs complete over a rendezvous transport (NCCL's point-to-point
// calls): each stage posts its messages in its step program's order, a send held back and posted
// in one group with the stage's next receive and the receives posted with it (or alone where the
// program waits for it first: exec/runtime/grouped_hand_overs.h), a group done once every message
// in it has met its match, and
// the n-th message from one stage to another matching the other's n-th receive from it (no tags).
// A stage whose group waits for a message the peer posts only after a group of its own that waits
// for this stage stalls both for good; a pair whose n-th messages are different tensors would
// deliver the wrong one. One stage program per stage (the ranks of one data replica; replicas
// run the same programs) is walked with these rules.
//
// The step compiler posts a pass's receives together before it, in the order the peer sends them,
// and under interleaved 1F1B those of the steady state's next backward too, as Megatron-LM does
// (step_compiler_internal.h); so GPipe, 1F1B and interleaved 1F1B programs complete. Received at
// first use, a cut crossed by two tensors would pair the wrong ones, and an interleaved stage
// would hold a send for the next chunk while its peer first waited for an earlier chunk's message.

#include <optional>
#include <span>
#include <string>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

// Why the hand-overs do not complete: the stage and instruction where the walk stopped, and what
// every stage still waits for.
struct HandOverStall {
  int stage = -1;
  int instruction = -1;
  std::string message;
};

// nullopt when every stage's hand-overs complete (and match) in groups; `stage_programs` holds one
// program per stage, in stage order (one stage: nothing to walk).
std::optional<HandOverStall> stall_of_grouped_hand_overs(std::span<const StepProgram> stage_programs);

// Where the plan's training step, or else its evaluation, stalls in groups (the message says
// which); nullopt when both hand over completely (a plan without a pipeline: trivially).
std::optional<HandOverStall> stall_of_plan_hand_overs(const Plan& plan, const CompiledPlan& compiled);

// Whether that is nullopt: what lets an executor move the hand-overs in groups.
bool hand_overs_complete_in_groups(const Plan& plan, const CompiledPlan& compiled);

// The same, with the training step's programs (one per stage, in stage order) already compiled:
// only the evaluation's are compiled here (the simulator has the others in hand), once per shape
// of the evaluation (model, cut into chunks, mesh, schedule, micro-batches: what decides its
// messages), remembered for the next plan of that shape.
bool hand_overs_complete_in_groups(const Plan& plan, const CompiledPlan& compiled,
                                   std::span<const StepProgram> training_programs);

}  // namespace splitbrain::plans
