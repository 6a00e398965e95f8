#pragma once
// What a plan's choices are worth against another plan of the same job: `plan --against FILE`
// compares the user's plan with the planner's pick choice by choice.
//
// The plan's choices are taken in a fixed order (mesh and layer shardings, pipeline stages,
// schedule, micro-batches, sequence parallelism's re-gathered inputs, recomputation, ZeRO stage,
// gradient settings, optimizer settings) and the walk goes from the user's plan to the pick
// changing one choice at a time, pricing every plan on the way with sim::simulate (as the planner
// prices a ranked plan). Each step's deltas are the difference the choice makes in that order, so
// the steps' deltas add up to pick - user exactly (they telescope; floating-point addition aside).
// A plan on the way that no step can run (plans/plan_validation.h, or tied weights the step cannot
// share: plans/tied_weights.h) is not priced: its choice is merged with the next one into one
// step, and the step says why.

#include <cstdint>
#include <string>
#include <vector>

#include "plans/plan.h"
#include "sim/search/planner_request.h"

namespace splitbrain::sim {

// One plan's price as the ranking shows it.
struct PlanFigures {
  double seconds = 0.0;    // predicted step time
  int64_t peak_bytes = 0;  // peak memory of the fullest device
  int64_t sent_bytes = 0;  // bytes sent per step by the device that sends most
  bool feasible = false;   // every device within the request's memory limit
};

struct ChoiceStep {
  std::vector<std::string> choices;      // one, or several merged (in walk order)
  std::vector<std::string> user_values;  // each choice as the user's plan makes it
  std::vector<std::string> pick_values;  // each choice as the pick makes it
  // Per choice but the last: why the plan with the walk up to that choice is not valid.
  std::vector<std::string> merge_reasons;
  PlanFigures before;  // the plan the step starts from, priced
  PlanFigures after;   // the plan with the step's choices changed, priced
  plans::Plan plan_after;

  double delta_seconds() const { return after.seconds - before.seconds; }
  int64_t delta_peak_bytes() const { return after.peak_bytes - before.peak_bytes; }
  int64_t delta_sent_bytes() const { return after.sent_bytes - before.sent_bytes; }
};

struct PlanDifference {
  PlanFigures user;
  PlanFigures pick;
  std::vector<ChoiceStep> steps;  // only choices that differ; empty when the plans are the same
  int plans_priced = 0;           // simulations run: the user's plan and one per step
};

// The walk from `user` to `pick`, both plans of `request`'s job (model, batch, dtype, devices) that
// a step can run. Throws PlanError, prefixed "against", when `user` is not such a plan.
PlanDifference plan_difference(const PlannerRequest& request, const plans::Plan& user, const plans::Plan& pick);

// The figures the ranking shows for a plan, as the planner predicts the plans it keeps (a long
// pipeline grown from its steady-state cut, sim/steady_pipeline.h).
PlanFigures price_figures(const PlannerRequest& request, const plans::Plan& plan);

}  // namespace splitbrain::sim
