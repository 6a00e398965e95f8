#include "plans/pipeline_order.h"

#include <algorithm>

namespace splitbrain::plans {

std::vector<std::pair<PassKind, int>> pass_order(int stage, int stages, int micro_batches, PipelineSchedule schedule) {
  std::vector<std::pair<PassKind, int>> order;
  if (schedule == PipelineSchedule::gpipe) {
    for (int m = 0; m < micro_batches; ++m) order.emplace_back(PassKind::forward, m);
    for (int m = 0; m < micro_batches; ++m) order.emplace_back(PassKind::backward, m);
    return order;
  }
  // The warm-up lets the last stage start its first backward as early as possible.
  const int warmup = std::min(stages - stage - 1, micro_batches);
  int next_forward = 0;
  int next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.emplace_back(PassKind::forward, next_forward);
  while (next_forward < micro_batches) {
    order.emplace_back(PassKind::forward, next_forward++);
    order.emplace_back(PassKind::backward, next_backward++);
  }
  while (next_backward < micro_batches) order.emplace_back(PassKind::backward, next_backward++);
  return order;
}

}  // namespace splitbrain::plans
