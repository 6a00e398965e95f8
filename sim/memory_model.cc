#include "sim/memory_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "plans/pipeline_order.h"
#include "plans/plan_error.h"
#include "plans/step_compiler.h"

namespace splitbrain::sim {

int micro_batches_in_flight(const plans::Plan& plan, int stage) {
  const int stages = plan.stage_count();
  if (stage < 0 || stage >= stages) {
    throw plans::PlanError(fmt::format("stage {} is out of range: the plan has {} stage(s)", stage, stages));
  }
  if (stages == 1) return 1;  // micro-batches run forward and backward one after another
  // The warm-up's forwards (plans/pipeline_order.h decides how many) and the steady state's one,
  // each under interleaving a chunk's share (1/V) of a micro-batch's activations (chunks of equal
  // size). GPipe's warm-up is every micro-batch, 1F1B's the stages after this one.
  const int chunks =
      plan.schedule == plans::PipelineSchedule::interleaved_one_f_one_b ? std::max(1, plan.virtual_stages) : 1;
  const int warmup = plans::warmup_forwards(stage, stages, plan.micro_batches, plan.schedule, chunks);
  const int passes = std::min(plan.micro_batches * chunks, warmup + 1);
  return std::min(plan.micro_batches, (passes + chunks - 1) / chunks);
}

namespace {

// The first rank of the stage: ranks of a stage hold alike.
int first_rank_of(const plans::Plan& plan, int stage) {
  if (stage < 0 || stage >= plan.stage_count()) {
    throw plans::PlanError(
        fmt::format("stage {} is out of range: the plan has {} stage(s)", stage, plan.stage_count()));
  }
  int rank = 0;
  while (plan.pipe_axis >= 0 && plan.mesh.coordinate(rank, plan.pipe_axis) != stage) ++rank;
  return rank;
}

}  // namespace

MemoryBreakdown stage_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage) {
  return memory_breakdown(plans::step_memory(plan, compiled, first_rank_of(plan, stage)));
}

MemoryBreakdown memory_breakdown(const plans::MemoryPeaks& walk) {
  using plans::MemoryCategory;
  MemoryBreakdown memory;
  memory.params = walk.of(MemoryCategory::params);
  memory.grads = walk.of(MemoryCategory::grads);
  memory.optimizer = walk.of(MemoryCategory::optimizer);
  memory.activations = walk.of(MemoryCategory::activations);
  memory.buffers = walk.of(MemoryCategory::buffers);
  memory.peak = walk.total;
  return memory;
}

int memory_equivalent_micro_batches(const plans::Plan& plan) {
  const int stages = plan.stage_count();
  if (stages == 1) return std::min(plan.micro_batches, 2);
  switch (plan.schedule) {
    case plans::PipelineSchedule::gpipe:
      return plan.micro_batches;
    case plans::PipelineSchedule::one_f_one_b:
      // Warm-up, at least two steady (forward, backward) pairs, cool-down.
      return std::min(plan.micro_batches, stages + 2);
    case plans::PipelineSchedule::interleaved_one_f_one_b:
      // A multiple of the stages: the warm-up's round, a steady round and the cool-down's (with
      // two rounds the warm-up and cool-down meet and some sends are held for less long).
      return std::min(plan.micro_batches, 3 * stages);
  }
  return plan.micro_batches;
}

namespace {

// The plan cut to its memory-equivalent micro-batches.
plans::Plan memory_equivalent_cut(const plans::Plan& plan) {
  plans::Plan shorter = plan;
  shorter.micro_batches = memory_equivalent_micro_batches(plan);
  shorter.global_batch = plan.micro_batch_size() * shorter.micro_batches;
  return shorter;
}

}  // namespace

bool plan_fits_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int64_t limit_bytes) {
  const plans::Plan shorter = memory_equivalent_cut(plan);
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    if (!plans::step_memory_within(shorter, compiled, first_rank_of(shorter, stage), limit_bytes)) return false;
  }
  return true;
}

bool stage_fits_memory(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage, int64_t limit_bytes) {
  const plans::Plan shorter = memory_equivalent_cut(plan);
  return plans::step_memory_within(shorter, compiled, first_rank_of(shorter, stage), limit_bytes);
}

}  // namespace splitbrain::sim
