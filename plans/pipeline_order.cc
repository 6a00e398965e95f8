#include "plans/pipeline_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

std::vector<PipelinePass> interleaved(int stage, int stages, int micro_batches, int chunks) {
  // Megatron-LM's forward_backward_pipelining_with_interleaving: virtual micro-batch k (of
  // micro_batches x chunks) is micro-batch (k / (S V)) S + k % S of local chunk (k % (S V)) / S,
  // the local chunks taken in reverse for the backward.
  const int total = micro_batches * chunks;
  const int group = stages * chunks;
  auto pass = [&](int k, PassKind kind) {
    int local = (k % group) / stages;
    if (kind == PassKind::backward) local = chunks - 1 - local;
    return PipelinePass{kind, (k / group) * stages + k % stages, local * stages + stage};
  };
  const int warmup = warmup_forwards(stage, stages, micro_batches, PipelineSchedule::interleaved_one_f_one_b, chunks);
  std::vector<PipelinePass> order;
  order.reserve(static_cast<size_t>(2 * total));
  for (int k = 0; k < warmup; ++k) order.push_back(pass(k, PassKind::forward));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(pass(k + warmup, PassKind::forward));
    order.push_back(pass(k, PassKind::backward));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(pass(k, PassKind::backward));
  return order;
}

}  // namespace

int warmup_forwards(int stage, int stages, int micro_batches, PipelineSchedule schedule, int virtual_stages) {
  const int total = micro_batches * virtual_stages;
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return total;
    case PipelineSchedule::one_f_one_b:
      // Lets the last stage start its first backward as early as possible.
      return std::min(stages - stage - 1, total);
    case PipelineSchedule::interleaved_one_f_one_b:
      return micro_batches == stages ? total
                                     : std::min(total, 2 * (stages - stage - 1) + (virtual_stages - 1) * stages);
  }
  return total;
}

std::vector<PipelinePass> pass_order(int stage, int stages, int micro_batches, PipelineSchedule schedule,
                                     int virtual_stages) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1 || virtual_stages < 1 ||
      static_cast<int64_t>(micro_batches) * virtual_stages > INT_MAX ||
      static_cast<int64_t>(stages) * virtual_stages > INT_MAX) {
    throw PlanError(fmt::format("pass_order: stage {} of {}, {} micro-batches, {} virtual stages is not a pipeline",
                                stage, stages, micro_batches, virtual_stages));
  }
  std::vector<PipelinePass> order;
  if (schedule == PipelineSchedule::interleaved_one_f_one_b) {
    if (micro_batches % stages != 0) {
      throw PlanError(
          fmt::format("pass_order: the interleaved_1f1b schedule needs a multiple of the {} stages as "
                      "micro-batches, got {}",
                      stages, micro_batches));
    }
    return interleaved(stage, stages, micro_batches, virtual_stages);
  }
  if (virtual_stages != 1) {
    throw PlanError(fmt::format("pass_order: {} virtual stages need the interleaved_1f1b schedule", virtual_stages));
  }
  if (schedule == PipelineSchedule::gpipe) {
    for (int m = 0; m < micro_batches; ++m) order.push_back({PassKind::forward, m, stage});
    for (int m = 0; m < micro_batches; ++m) order.push_back({PassKind::backward, m, stage});
    return order;
  }
  const int warmup = warmup_forwards(stage, stages, micro_batches, schedule);
  int next_forward = 0;
  int next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back({PassKind::forward, next_forward, stage});
  while (next_forward < micro_batches) {
    order.push_back({PassKind::forward, next_forward++, stage});
    order.push_back({PassKind::backward, next_backward++, stage});
  }
  while (next_backward < micro_batches) order.push_back({PassKind::backward, next_backward++, stage});
  return order;
}

bool receives_next_pass_ahead(PipelineSchedule schedule, int warmup, const std::vector<PipelinePass>& passes,
                              size_t index) {
  return schedule == PipelineSchedule::interleaved_one_f_one_b && index < passes.size() &&
         passes[index].kind == PassKind::forward && index >= static_cast<size_t>(warmup) && index + 1 < passes.size();
}

std::vector<PipelinePass> pass_order(const Plan& plan, int stage) {
  return pass_order(stage, plan.stage_count(), plan.micro_batches, plan.schedule, plan.virtual_stages);
}

}  // namespace splitbrain::plans
