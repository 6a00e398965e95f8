#pragma once
// Whether a step's pipeline hand-overs complete over a rendezvous transport (NCCL's point-to-point
// calls): each stage posts its messages in its step program's order, a send held back and posted
// in one group with the stage's next receive (or alone where the program waits for it first:
// exec/runtime/grouped_hand_overs.h), a group done once every message in it has met its match, and
// the n-th message from one stage to another matching the other's n-th receive from it (no tags).
// A stage whose group waits for a message the peer posts only after a group of its own that waits
// for this stage stalls both for good; a pair whose n-th messages are different tensors would
// deliver the wrong one. One stage program per stage (the ranks of one data replica; replicas
// run the same programs) is walked with these rules.
//
// GPipe and 1F1B programs complete; interleaved 1F1B's do not: a stage holds a send for the next
// chunk while its peer first waits for a message of an earlier chunk (NCCL needs the receives
// posted a pass early there, as Megatron-LM posts them).

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

// Whether the plan's training step and its evaluation both hand over completely in groups (a plan
// without a pipeline: trivially): what lets an executor move them that way.
bool hand_overs_complete_in_groups(const Plan& plan, const CompiledPlan& compiled);

}  // namespace splitbrain::plans
