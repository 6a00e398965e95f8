#pragma once
// The timeline of one training step's forward and backward passes over pipeline stages and
// micro-batches, for GPipe (all forwards, then all backwards; Huang et al. 2019) and 1F1B
// (warm-up forwards, then one forward one backward, then cool-down; Narayanan et al. 2019).
// With one stage and one micro-batch it is simply forward then backward.

#include <span>
#include <vector>

#include "plans/pipeline_order.h"
#include "plans/plan.h"

namespace splitbrain::sim {

// What one stage spends on one micro-batch. Communication inside a stage is blocking, so it is
// part of the pass; the hand-over to the neighbouring stage is a separate delay.
struct StageWork {
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;
  double send_forward_seconds = 0.0;   // activations to the next stage
  double send_backward_seconds = 0.0;  // gradients to the previous stage
};

using plans::PassKind;
using plans::pass_order;

struct ScheduledPass {
  int stage = 0;
  int micro_batch = 0;
  PassKind kind = PassKind::forward;
  double start_seconds = 0.0;
  double end_seconds = 0.0;
};

struct PipelineTimeline {
  std::vector<ScheduledPass> passes;     // in the order each stage runs them, stage by stage
  std::vector<double> stage_end_seconds; // when each stage finishes its last backward pass
  double end_seconds = 0.0;              // the latest of them
};

PipelineTimeline schedule_pipeline(std::span<const StageWork> stages, int micro_batches,
                                   plans::PipelineSchedule schedule);

}  // namespace splitbrain::sim
