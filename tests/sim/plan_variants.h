#pragma once
// The planner's plans for a zoo model with the variants the planner may not pick itself: ZeRO 1-3,
// whole-chunk recompute, GPipe, interleaved 1F1B (alone, with recompute, with ZeRO 3). The suites
// that check a property on "every family and variant" share them.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "sim/search/planner.h"
#include "tests/plans/interleaved_variant.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim::testing {

inline std::vector<plans::Plan> plans_with_variants(const std::string& model_spec, int devices, int64_t batch) {
  const PlannerRequest request = testing::zoo_request(model_spec, devices, batch, "dgx-a100-80g");
  std::vector<plans::Plan> out;
  for (const PricedPlan& p : plan_training(request).plans) {
    out.push_back(p.plan);
    if (p.plan.zero_stage != 0 || p.plan.recompute_activations) continue;
    for (int zero = 1; zero <= 3; ++zero) {
      plans::Plan variant = p.plan;
      variant.zero_stage = zero;
      variant.family += fmt::format(" +zero{}", zero);
      out.push_back(variant);
    }
    plans::Plan recompute = p.plan;
    recompute.recompute_activations = true;
    recompute.family += " +recompute";
    out.push_back(recompute);
    if (p.plan.pipe_axis >= 0) {
      plans::Plan gpipe = p.plan;
      gpipe.schedule = plans::PipelineSchedule::gpipe;
      gpipe.family += " +gpipe";
      out.push_back(gpipe);
    }
    // Interleaved 1F1B, alone and with recompute and ZeRO 3 (the planner proposes one chunk).
    if (const std::optional<plans::Plan> interleaved = plans::testing::interleaved_variant(p.plan, 2)) {
      out.push_back(*interleaved);
      plans::Plan recomputed = *interleaved;
      recomputed.recompute_activations = true;
      recomputed.family += " +recompute";
      out.push_back(recomputed);
      plans::Plan zero = *interleaved;
      zero.zero_stage = 3;
      zero.family += " +zero3";
      out.push_back(zero);
    }
  }
  return out;
}

}  // namespace splitbrain::sim::testing
