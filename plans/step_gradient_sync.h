#pragma once
// GradientSync: the part of a step program that turns the backward's gradients into updated
// parameters — the compiled plan's gradient buckets (packed into a flat buffer, reduced, unpacked),
// the optimizer, and ZeRO (Rajbhandari et al. 2020): stage 1 reduce-scatters each bucket and
// updates this rank's slice, stage 2 also keeps only the gradient slice (the whole gradients are
// working buffers from the layer's backward to the bucket's reduce-scatter), stage 3 also keeps
// only the parameter slice; stages 1-2 gather the updated slices back into whole parameters.
// Where the buckets overlap the backward, each starts right after the last micro-batch's
// backward of its last layer and is waited for after the passes (ZeRO 3: when the next one
// starts, as FSDP2 frees each reduce-scatter's input once it is done); otherwise all run after
// them.

#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "plans/program_writer.h"
#include "plans/step_facts.h"

namespace splitbrain::plans {

class GradientSync {
 public:
  GradientSync(const Plan& plan, const CompiledPlan& compiled, const StepFacts& facts, ProgramWriter& writer);

  // ZeRO 2-3: the whole gradients of a sharded layer, made at its first backward of the step.
  void ensure_whole_gradients(int layer);
  // What `layer`'s backward writes its weight gradients into.
  SmallIndexList gradient_buffers(int layer) const;
  // Overlap: after the last micro-batch's backward of `layer`, start the buckets it completes.
  void start_buckets_completed_by(int layer);
  // After the passes and the pipeline sends: the rest of the reductions, the update, ZeRO's gathers.
  void finish_step();

 private:
  struct Started {
    size_t bucket = 0;
    int reduce = -1;        // the reduce instruction
    int flat = -1;          // the packed bucket
    int reduced = -1;       // ZeRO 1: where this rank's reduced slice lands
    bool finished = false;  // waited for, its input let go
  };
  void start(size_t bucket);
  void finish(Started& started);
  // Megatron's embedding group: this stage's gradient of a table a tied head on another stage
  // copies, swapped with that stage's, each adding the other's (CompiledLayer::tied_copy).
  void swap_tied_gradients();
  // Whether the bucket holds a gradient swap_tied_gradients() changes (it starts after the swap).
  bool holds_swapped_gradient(const GradientBucket& bucket) const;

  const Plan& plan_;
  const CompiledPlan& compiled_;
  const StepFacts& facts_;
  ProgramWriter& writer_;
  std::vector<SmallIndexList> whole_gradients_;  // ZeRO 2-3 working buffers, per layer
  std::vector<Started> started_;
  std::vector<bool> bucket_started_;
  std::vector<bool> swapped_;  // per layer: a tied table or copy whose gradient is swapped
};

}  // namespace splitbrain::plans
