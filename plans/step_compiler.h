#pragma once
// compile_step: a plan's training step on one rank, as the step program (plans/step_program.h)
// both the simulator and the executor consume.
//
// The step, in order: the stage's forward and backward passes over micro-batches in the plan's
// schedule (plans::pass_order; under interleaved 1F1B each pass runs one of the stage's model
// chunks, with its own buffers per (chunk, micro-batch)); then the pipeline sends are waited for; then the gradient
// buckets are reduced (started during the last backward where the plan overlaps them) and the optimizer updates; under
// ZeRO 1-2 the updated slices are gathered back. Lifetimes follow what each backward reads (model::SavedForBackward):
// after a layer's forward, an input it does not save goes, and so does a producer's output once its last consumer on
// the stage has run, unless the producer or a consumer saves it as it is. An output sent down the pipeline stays held
// by its send until the sends are waited for. Under recompute only the stage's inputs (its input layers' outputs and
// what it received) stay between a micro-batch's forward and the forward run again before its backward.

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::plans {

// Throws PlanError for a rank outside the plan's mesh or a compiled plan of another model.
StepProgram compile_step(const Plan& plan, const CompiledPlan& compiled, int rank);

// The forward passes of every micro-batch in turn, each keeping all it computes until its last
// layer has run (the loss reads the logits): what evaluation runs. No backward, no update.
StepProgram compile_evaluation(const Plan& plan, const CompiledPlan& compiled, int rank);

// The memory walk of compile_step's program (walk_memory of it), without keeping the program:
// what the simulator reports, cheap enough for the planner's many candidates.
MemoryPeaks step_memory(const Plan& plan, const CompiledPlan& compiled, int rank);

// Whether step_memory(plan, compiled, rank).total stays within `limit_bytes`, the compilation
// stopped at the first byte over it (what a search asks of most plans, which do not fit).
bool step_memory_within(const Plan& plan, const CompiledPlan& compiled, int rank, int64_t limit_bytes);

// compile_step's program and its memory walk from one compilation: the simulator needs both, and
// compiling is most of its cost.
struct StepWithMemory {
  StepProgram program;
  MemoryPeaks peaks;
};
StepWithMemory compile_step_with_memory(const Plan& plan, const CompiledPlan& compiled, int rank);

}  // namespace splitbrain::plans
