#pragma once
// Memory per rank, in the categories the executor's tracking allocator reports, so predicted and
// measured line up category by category. It is the walk of the rank's step program
// (plans/step_compiler.h, plans/memory_walk.h): the program alone says when a buffer comes and
// goes, and the executor runs the same program, so nothing here re-derives a lifetime.

#include <cstdint>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan.h"

namespace splitbrain::sim {

struct MemoryBreakdown {
  int64_t params = 0;       // local parameter shards (whole parameters under ZeRO 0-2)
  int64_t grads = 0;        // local gradient buffers (sharded under ZeRO 2-3)
  int64_t optimizer = 0;    // optimizer state (+ fp32 master weights for fp16/bf16), ZeRO >= 1 shards it
  int64_t activations = 0;  // the category's peak: kept tensors of the micro-batches in flight and transients
  int64_t buffers = 0;      // the category's peak: gradients of the backward, buckets, ZeRO's working copies
  int64_t peak = 0;         // every category together at the step's worst moment
  int64_t activations_peak() const { return activations; }
  int64_t total() const { return peak; }
};

// The memory of a rank on pipeline stage `stage` (all ranks of a stage hold the same amounts).
// Throws PlanError for a stage out of range or a compiled plan of another model.
MemoryBreakdown stage_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage);

// The categories of a step program's memory walk (what stage_memory reports for its stage's rank).
MemoryBreakdown memory_breakdown(const plans::MemoryPeaks& walk);

// Whether every rank of the plan holds at most `limit_bytes` (peak_memory_bytes of its
// simulation within the limit), from the stages' walks alone, stopping at the first stage over
// it (stage 0 first: under 1F1B it keeps the most micro-batches in flight). The walks are of the
// plan cut to memory_equivalent_micro_batches, which hold the same peaks.
bool plan_fits_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int64_t limit_bytes);

// Whether the ranks of stage `stage` hold at most `limit_bytes` (walked as plan_fits_memory does).
bool stage_fits_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage, int64_t limit_bytes);

// The fewest micro-batches (of the plan's size) whose step programs reach the same memory peaks
// as the plan's on every stage: a 1F1B stage keeps at most `stages` micro-batches in flight, so
// after the warm-up every further (forward, backward) pair repeats the same allocations; GPipe
// keeps them all. What makes a 1T GPT's 192-micro-batch pipelines cheap to walk; a test walks
// both and compares.
int memory_equivalent_micro_batches(const plans::Plan& plan);

// Micro-batches whose activations a stage keeps at once: GPipe all of them; 1F1B at most
// (stages - stage) (Narayanan et al. 2019, PipeDream-Flush); interleaved 1F1B its warm-up's
// chunk passes plus one, in micro-batches of V chunks (rounded up). The planner's estimate; the step
// program is what holds them.
int micro_batches_in_flight(const plans::Plan& plan, int stage);

}  // namespace splitbrain::sim
