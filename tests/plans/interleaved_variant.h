#pragma once
// The interleaved 1F1B copy of a pipelined plan, for the tests that run every family's variants
// (the planner itself proposes one chunk per stage): the layers re-cut into stage_count() x V
// chunks of about equal layer counts where no tensor skips a chunk (plans::even_chunks), the
// micro-batches a multiple of the stages (Megatron-LM's rule), at least twice the stages where the
// batch and every layer's split allow it.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/plan.h"
#include "plans/plan_builder.h"
#include "plans/plan_error.h"
#include "plans/plan_validation.h"

namespace splitbrain::plans::testing {

// Named "<family> +interleaved V"; nullopt for a plan without a pipeline of at least 2 stages,
// or when no cut or micro-batch count fits.
inline std::optional<Plan> interleaved_variant(const Plan& plan, int virtual_stages) {
  const int stages = plan.stage_count();
  if (plan.pipe_axis < 0 || stages < 2 || virtual_stages < 2) return std::nullopt;
  const std::optional<std::vector<int>> chunks = even_chunks(*plan.model, stages * virtual_stages);
  if (!chunks) return std::nullopt;
  Plan variant = plan;
  variant.schedule = PipelineSchedule::interleaved_one_f_one_b;
  variant.virtual_stages = virtual_stages;
  variant.stage_of_layer = *chunks;
  variant.family += " +interleaved " + std::to_string(virtual_stages);
  // At least two groups of S micro-batches where the batch allows, so that every stage reaches
  // the schedule's steady state (with S of them every stage runs all its forwards first).
  const int64_t least = ((plan.micro_batches + stages - 1) / stages) * stages;
  std::vector<int64_t> candidates;
  for (int64_t micro = std::max<int64_t>(least, 2 * stages); micro <= plan.global_batch; micro += stages) {
    candidates.push_back(micro);
  }
  for (int64_t micro = least; micro < 2 * stages && micro <= plan.global_batch; micro += stages)
    candidates.push_back(micro);
  for (const int64_t micro : candidates) {
    if (plan.global_batch % micro != 0) continue;
    variant.micro_batches = static_cast<int>(micro);
    try {
      validate_plan(variant, "interleaved variant");
      return variant;
    } catch (const PlanError&) {
      // a split that does not divide this micro-batch: try the next count
    }
  }
  return std::nullopt;
}

}  // namespace splitbrain::plans::testing
