#pragma once
// Pricing a plan the planner found with each of its ZeRO and activation-recompute variants: the
// fastest that fits is the plan's price. Most of a large search's time goes
// here, so nothing is timed that cannot change the answer: whether a variant fits is decided by
// its step programs' memory walks alone (sim::plan_fits_memory, the peaks simulate reports),
// and only the variants that fit get a timeline; against a rival, a plan whose lower bound on
// the step time (sim/step_time_bound.h) is not below the rival's is not timed at all.

#include <optional>

#include "sim/search/planner_request.h"
#include "sim/search/searched_plans.h"

namespace splitbrain::sim {

// Prices a plan and its memory variants: ZeRO stages from the plan's own up to 3, each keeping
// every activation, recomputing attention's score terms (selective, for models with attention),
// the fewest blocks of each chunk that make it fit (block recompute) or whole chunks (full
// recompute); returns the fastest variant that fits (the earliest of those
// in that order among equals), or the plan as it is, marked infeasible, when none fits. A plan
// whose tied weights a step cannot share (plans/tied_weights.h) is priced with its embeddings
// sharded like their heads; nullopt (counted in `stats`) when that cannot help either.
std::optional<PricedPlan> price_plan(const PlannerRequest& request, plans::Plan plan, SearchStats& stats);

// The plan as it is, without variants: simulated (a long pipeline grown from its steady-state cut,
// sim/steady_pipeline.h), feasible when every rank fits; nullopt
// (counted in `stats`) when a step cannot share its tied weights, as for price_plan.
std::optional<PricedPlan> price_as_is(const PlannerRequest& request, const plans::Plan& plan, SearchStats& stats);

// Makes the whole prediction of a plan the search keeps, when it has not been made yet (a plan
// price_plan_against returns is ranked by PricedPlan::seconds alone): the simulation, a long
// pipeline's grown from its steady-state cut (sim/steady_pipeline.h), whose full step programs
// would not fit in memory on the largest jobs.
void complete_prediction(const PlannerRequest& request, PricedPlan& priced);

// How a search keeps its best plan: the overall search prefers a plan that fits, then the faster
// (best_plan); the pipeline family keeps the fastest whether it fits or not (pipeline_plans).
enum class Ranking { fitting_first, fastest };

// Whether `candidate` replaces `incumbent` under `ranking` (ties keep the incumbent).
bool better_plan(const PricedPlan& candidate, const PricedPlan& incumbent, Ranking ranking);

// What a plan must beat to replace the search's best so far. A search that prices candidates out
// of their order (on several threads) breaks a tie for the candidate that comes first in the
// order, as one thread would: `wins_ties` says the rival does.
struct Rival {
  double seconds = 0;
  bool feasible = false;
  bool wins_ties = true;
};
Rival rival_of(const PricedPlan& incumbent);

// Whether a plan whose step time is at least `lower_bound_seconds` is certainly slower than
// `rival_seconds`, whatever the rounding (it cannot tie either).
bool cannot_beat(double lower_bound_seconds, double rival_seconds);

// A lower bound on the step time of every variant price_plan_against weighs for `plan`: no answer
// it gives for the plan is faster. nullopt when no step can run the plan (as price_plan_against
// would refuse it).
std::optional<double> lowest_step_time_bound(const PlannerRequest& request, plans::Plan plan);

// price_plan(request, plan) when that answer could replace `rival` (every answer when `rival` is
// null): better_plan than it, or equal to it where it does not win ties; nullopt when it provably
// could not, found without timing what cannot win.
std::optional<PricedPlan> price_plan_against(const PlannerRequest& request, plans::Plan plan, const Rival* rival,
                                             Ranking ranking, SearchStats& stats);

}  // namespace splitbrain::sim
