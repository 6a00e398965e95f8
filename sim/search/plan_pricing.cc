#include "sim/search/plan_pricing.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/tied_weights.h"
#include "sim/memory_model.h"
#include "sim/step_time_bound.h"

namespace splitbrain::sim {
namespace {

// The bound and the timeline add the same seconds in different orders; a bound this much above
// the rival is above it whatever the rounding.
constexpr double kBoundRoundingMargin = 1e-9;

bool cannot_beat(double lower_bound_seconds, double rival_seconds) {
  return lower_bound_seconds >= rival_seconds * (1.0 + kBoundRoundingMargin);
}

// The plan with ZeRO stage `zero` and whole-stage recompute as `recompute`, labelled so.
plans::Plan variant_of(const plans::Plan& plan, int zero, bool recompute) {
  plans::Plan variant = plan;
  variant.zero_stage = zero;
  variant.recompute_activations = recompute;
  variant.family += fmt::format(" +zero{}{}", zero, recompute ? " +recompute" : "");
  return variant;
}

void count_left_out(std::string problem, SearchStats& stats) {
  if (stats.plans_left_out++ == 0) stats.first_left_out_reason = std::move(problem);
}

// Whether the step can share `plan`'s tied weights; when not, counts it as left out.
bool shares_tied_weights(const plans::Plan& plan, SearchStats& stats) {
  std::string problem = plans::tied_weight_problem(plan);
  if (problem.empty()) return true;
  count_left_out(std::move(problem), stats);
  return false;
}

// The plan as a step can run it: as it is, or with its tied embeddings sharded like their heads;
// nullopt (counted) when neither can be.
std::optional<plans::Plan> with_shared_tied_weights(plans::Plan plan, SearchStats& stats) {
  std::string problem = plans::tied_weight_problem(plan);
  if (problem.empty()) return plan;
  if (std::optional<plans::Plan> following = plans::with_tables_following_heads(plan)) {
    if (plans::tied_weight_problem(*following).empty()) return following;
  }
  count_left_out(std::move(problem), stats);
  return std::nullopt;
}

// Every variant simulated in full, feasibility read from each prediction: the exhaustive search.
PricedPlan price_every_variant(const PlannerRequest& request, plans::Plan plan, SearchStats& stats) {
  const int64_t limit = request.effective_memory_limit();
  auto price = [&](const plans::Plan& p) {
    ++stats.plans_simulated;
    return simulate(p, plans::compile_plan(p), request.cluster);
  };
  PricedPlan priced{plan, price(plan), false};
  priced.feasible = peak_memory_bytes(priced.prediction) <= limit;
  if (priced.feasible) return priced;
  std::optional<PricedPlan> best;
  for (int zero : {1, 2, 3}) {
    for (bool recompute : {false, true}) {
      const plans::Plan variant = variant_of(plan, zero, recompute);
      if (!shares_tied_weights(variant, stats)) continue;
      PricedPlan candidate{variant, price(variant), false};
      candidate.feasible = peak_memory_bytes(candidate.prediction) <= limit;
      if (candidate.feasible &&
          (!best || candidate.prediction.iteration_seconds < best->prediction.iteration_seconds)) {
        best = std::move(candidate);
      }
    }
    if (best) break;
  }
  return best ? *best : priced;
}

}  // namespace

bool better_plan(const PricedPlan& candidate, const PricedPlan& incumbent, Ranking ranking) {
  if (ranking == Ranking::fitting_first && candidate.feasible != incumbent.feasible) return candidate.feasible;
  return candidate.prediction.iteration_seconds < incumbent.prediction.iteration_seconds;
}

std::optional<PricedPlan> price_plan(const PlannerRequest& request, plans::Plan plan, SearchStats& stats) {
  return price_plan_against(request, std::move(plan), nullptr, Ranking::fastest, stats);
}

std::optional<PricedPlan> price_plan_against(const PlannerRequest& request, plans::Plan given, const PricedPlan* rival,
                                             Ranking ranking, SearchStats& stats) {
  std::optional<plans::Plan> runnable = with_shared_tied_weights(std::move(given), stats);
  if (!runnable) return std::nullopt;
  plans::Plan plan = std::move(*runnable);
  if (request.exhaustive) return price_every_variant(request, std::move(plan), stats);
  const int64_t limit = request.effective_memory_limit();
  // The time a plan that fits must beat: the rival's, except that a plan that fits beats any
  // rival that does not when fitting comes first.
  const double rival_seconds =
      rival != nullptr ? rival->prediction.iteration_seconds : std::numeric_limits<double>::infinity();
  const bool fit_wins = ranking == Ranking::fitting_first && rival != nullptr && !rival->feasible;
  const double bar = fit_wins ? std::numeric_limits<double>::infinity() : rival_seconds;
  auto time = [&](const plans::Plan& p, const plans::CompiledPlan& compiled) {
    ++stats.plans_simulated;
    return simulate(p, compiled, request.cluster);
  };
  auto fits = [&](const plans::Plan& p, const plans::CompiledPlan& compiled) {
    ++stats.memory_walks;
    return plan_fits_memory(p, compiled, limit);
  };

  auto bound = [&](const plans::Plan& p, const plans::CompiledPlan& compiled) {
    return iteration_seconds_lower_bound(p, compiled, request.cluster);
  };
  // Plans whose bound is not below the bar are not walked either until it matters: whether one
  // of them fits decides only whether the answer is its group's (and then it does not beat the
  // rival), so they are walked only before an answer below the bar is returned.
  struct Unwalked {
    plans::Plan plan;
    plans::CompiledPlan compiled;
  };
  std::vector<Unwalked> unwalked;
  auto none_of_unwalked_fits = [&] {
    return std::none_of(unwalked.begin(), unwalked.end(), [&](const Unwalked& u) { return fits(u.plan, u.compiled); });
  };

  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  if (cannot_beat(bound(plan, compiled), bar)) {
    unwalked.push_back({plan, compiled});  // if it fits it is the answer, and no faster than the bar
  } else if (fits(plan, compiled)) {
    Prediction prediction = time(plan, compiled);
    return PricedPlan{std::move(plan), std::move(prediction), true};
  }
  // Over the limit: shard the optimizer state (and more), or recompute activations. A lower ZeRO
  // stage that fits communicates less than a higher one, so the first stage with a variant that
  // fits has the answer: its fastest such variant.
  for (int zero : {1, 2, 3}) {
    std::optional<PricedPlan> best;
    bool some_fit = false;
    std::vector<Unwalked> unwalked_here;
    for (bool recompute : {false, true}) {
      plans::Plan variant = variant_of(plan, zero, recompute);
      if (!shares_tied_weights(variant, stats)) continue;
      plans::CompiledPlan variant_compiled = plans::compile_plan(variant);
      if (cannot_beat(bound(variant, variant_compiled), bar)) {
        unwalked_here.push_back({std::move(variant), std::move(variant_compiled)});
        continue;
      }
      if (!fits(variant, variant_compiled)) continue;
      some_fit = true;
      PricedPlan candidate{variant, time(variant, variant_compiled), true};
      if (!best || candidate.prediction.iteration_seconds < best->prediction.iteration_seconds)
        best = std::move(candidate);
    }
    if (some_fit) {
      // This stage has the answer. Its unwalked variants are no faster than the bar, so the answer
      // is `best` when that is below it, provided no earlier stage's unwalked variant fits.
      if (best && best->prediction.iteration_seconds < bar && none_of_unwalked_fits()) return best;
      return std::nullopt;
    }
    for (Unwalked& u : unwalked_here) unwalked.push_back(std::move(u));
  }
  // No variant known to fit. If an unwalked one does, the answer is no faster than the bar.
  // Otherwise the answer is the plan as it is, marked infeasible, which beats only a slower rival
  // (one that does not fit either, when fitting comes first).
  if (ranking == Ranking::fitting_first && rival != nullptr && rival->feasible) return std::nullopt;
  if (!none_of_unwalked_fits()) return std::nullopt;
  if (cannot_beat(bound(plan, compiled), rival_seconds)) return std::nullopt;
  Prediction prediction = time(plan, compiled);
  return PricedPlan{std::move(plan), std::move(prediction), false};
}

}  // namespace splitbrain::sim
