#pragma once
// Which plans the equivalence suites train for a world size: the planner's own, and variants of
// them the planner does not emit but the executor must run (ZeRO 1-3, recompute and its block
// form, selective recompute, gradient accumulation, gradients synced after the backward, a
// pipeline cut at a tensor several layers read, sequence parallelism, context parallelism alone
// and beside tensor parallelism, interleaved 1F1B), named as the planner names variants
// ("<family> +zero2").

#include <vector>

#include "plans/plan.h"
#include "sim/search/planner.h"

namespace splitbrain::equivalence {

std::vector<plans::Plan> plans_to_run(const std::vector<sim::PricedPlan>& planned);

}  // namespace splitbrain::equivalence
