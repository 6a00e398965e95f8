#pragma once
// Memory per rank, in the categories the executor's tracking allocator reports, so predicted and
// measured line up category by category.

#include <algorithm>
#include <cstdint>

#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::sim {

struct MemoryBreakdown {
  int64_t params = 0;       // local parameter shards (whole parameters under ZeRO 0-2)
  int64_t grads = 0;        // local gradient buffers (sharded under ZeRO 2-3)
  int64_t optimizer = 0;    // optimizer state (+ fp32 master weights for fp16/bf16), ZeRO >= 1 shards it
  int64_t activations = 0;  // tensors kept for backward, for every micro-batch in flight
  // The most activation bytes alive during a forward (the last micro-batch in flight's, its
  // transients included: a gathered copy, an output its consumer has not read yet).
  int64_t activations_in_forward = 0;
  int64_t buffers = 0;      // the backward's working set (gradients) and the gradient buckets
  // The most activations and buffers held at the same moment (their peaks come at different
  // times: activations at the end of the forward, buffers in the backward as activations go).
  int64_t activations_and_buffers_at_once = 0;
  // The activations category's peak (what the executor's tracker reports for it).
  int64_t activations_peak() const { return std::max(activations, activations_in_forward); }
  // The peak a rank reaches: model states plus the worst moment of the rest (a forward holds no
  // buffers).
  int64_t total() const { return params + grads + optimizer + std::max(activations_and_buffers_at_once, activations_peak()); }
};

// The memory of a rank on pipeline stage `stage` (all ranks of a stage hold the same amounts).
MemoryBreakdown stage_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage);

// Micro-batches whose activations a stage keeps at once: GPipe all of them; 1F1B at most
// (stages - stage) (Narayanan et al. 2019, PipeDream-Flush).
int micro_batches_in_flight(const plans::Plan& plan, int stage);

}  // namespace splitbrain::sim
