#pragma once
// The order in which a pipeline stage runs its forward and backward passes over micro-batches:
// the schedule itself, shared by the simulator (which times it) and the executor (which runs
// it). GPipe (Huang et al. 2019): all forwards, then all backwards. 1F1B (Narayanan et al.
// 2019): (stages - stage - 1) warm-up forwards, then one forward one backward, then cool-down.

#include <utility>
#include <vector>

#include "plans/plan.h"

namespace splitbrain::plans {

enum class PassKind { forward, backward };

std::vector<std::pair<PassKind, int>> pass_order(int stage, int stages, int micro_batches, PipelineSchedule schedule);

}  // namespace splitbrain::plans
