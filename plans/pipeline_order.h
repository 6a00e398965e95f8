#pragma once
// The order in which a pipeline stage runs its forward and backward passes over micro-batches:
// the schedule itself, shared by the simulator (which times it) and the executor (which runs
// it). GPipe (Huang et al. 2019): all forwards, then all backwards. 1F1B (Narayanan et al.
// 2019): (stages - stage - 1) warm-up forwards, then one forward one backward, then cool-down.
// Interleaved 1F1B (Narayanan et al. SC21, Section 2.2.2, as Megatron-LM runs it): the stage
// holds V model chunks (s, s + S, ..., s + (V - 1) S) and runs 1F1B over (chunk, micro-batch)
// passes: forwards go through its chunks in groups of S micro-batches (chunk 0's first S, chunk
// 1's first S, ..., then chunk 0's next S), backwards the same with the chunks in reverse; the
// warm-up is 2 (S - s - 1) + (V - 1) S forwards (every forward first when there are S
// micro-batches). The pipeline's bubble shrinks V-fold; nothing here computes it.

#include <vector>

#include "plans/plan.h"

namespace splitbrain::plans {

enum class PassKind { forward, backward };

// One pass of a stage: its kind, micro-batch and the model chunk (virtual stage) whose layers
// it runs (Plan::stage_of_layer; the stage itself with one chunk per stage).
struct PipelinePass {
  PassKind kind = PassKind::forward;
  int micro_batch = 0;
  int chunk = 0;
  friend bool operator==(const PipelinePass&, const PipelinePass&) = default;
};

// Throws PlanError for a stage out of range, fewer than one micro-batch or chunk, or an
// interleaved schedule whose micro-batches are not a multiple of the stages.
std::vector<PipelinePass> pass_order(int stage, int stages, int micro_batches, PipelineSchedule schedule,
                                     int virtual_stages = 1);

// The same for a plan's stage.
std::vector<PipelinePass> pass_order(const Plan& plan, int stage);

// Whether a stage receives what pass `index + 1` of its pass_order needs together with what pass
// `index` needs, before running pass `index`: interleaved 1F1B's steady-state forwards also wait
// for the backward after them, as Megatron-LM posts them (send-forward-backward-receive-forward-
// backward). `warmup`: warmup_forwards of the stage.
bool receives_next_pass_ahead(PipelineSchedule schedule, int warmup, const std::vector<PipelinePass>& passes,
                              size_t index);

// The forwards the stage runs before its steady state, in which each forward runs back to back
// with the backward after it (all of them under GPipe, and under interleaved 1F1B when there are
// as many micro-batches as stages). Arguments as pass_order's, unchecked.
int warmup_forwards(int stage, int stages, int micro_batches, PipelineSchedule schedule, int virtual_stages = 1);

}  // namespace splitbrain::plans
