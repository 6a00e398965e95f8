#include "sim/search/plan_pricing.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/recompute_scope.h"
#include "plans/tied_weights.h"
#include "sim/memory_model.h"
#include "sim/steady_pipeline.h"
#include "sim/step_time_bound.h"

namespace splitbrain::sim {
namespace {

// The bound and the timeline add the same seconds in different orders; a bound this much above
// the rival is above it whatever the rounding.
constexpr double kBoundRoundingMargin = 1e-9;

// How much of a step's activations is recomputed rather than kept: nothing, attention's score
// terms, the fewest blocks of each chunk that make the plan fit, or every layer.
enum class Recompute { none, selective, blocks, full };

// One way to make a plan fit: a ZeRO stage and a recompute mode.
struct MemoryVariant {
  int zero = 0;
  Recompute recompute = Recompute::none;
};

// Whether a selective-recompute variant differs from the plan that keeps every activation.
bool has_selectively_recomputable_layer(const model::Model& net) {
  return std::any_of(net.layers().begin(), net.layers().end(), plans::selective_recompute_applies);
}

// Every variant the plan format can say, the plan itself first, in the order ties are broken:
// ZeRO 0-3, each keeping every activation, recomputing attention's score terms (Megatron-LM's
// selective recompute; only where an attention core keeps its probabilities), the fewest blocks
// of each chunk that fit (Megatron-LM's block method; where a chunk holds two blocks or more),
// then whole chunks. A plan that already recomputes in full keeps its own choice.
std::vector<MemoryVariant> memory_variants(const plans::Plan& plan) {
  const bool by_blocks = plan.model != nullptr && plans::most_blocks_in_a_chunk(plan) >= 2;
  std::vector<Recompute> modes = {Recompute::none};
  if (plan.recompute_activations) {
    modes = {Recompute::full};
  } else if (plan.recompute_attention) {
    modes = {Recompute::selective};
    if (by_blocks) modes.push_back(Recompute::blocks);
    modes.push_back(Recompute::full);
  } else {
    if (plan.model != nullptr && has_selectively_recomputable_layer(*plan.model)) modes.push_back(Recompute::selective);
    if (by_blocks) modes.push_back(Recompute::blocks);
    modes.push_back(Recompute::full);
  }
  std::vector<MemoryVariant> variants;
  for (int zero = plan.zero_stage; zero <= 3; ++zero) {
    for (Recompute mode : modes) variants.push_back({zero, mode});
  }
  return variants;
}

// The plan as `variant` says, labelled so (the plan itself keeps its label). A block variant
// recomputes one block per chunk until fewest_blocks_that_fit settles the count (and its label).
plans::Plan variant_of(const plans::Plan& plan, MemoryVariant variant) {
  plans::Plan result = plan;
  const bool was_selective = plan.recompute_attention && !plan.recompute_activations;
  const bool was_full = plan.recompute_activations;
  result.zero_stage = variant.zero;
  result.recompute_activations = variant.recompute == Recompute::full || variant.recompute == Recompute::blocks;
  result.recompute_attention = variant.recompute == Recompute::selective;
  if (variant.recompute == Recompute::blocks) {
    result.recompute_blocks = 1;
  } else if (!was_full) {
    result.recompute_blocks = 0;
  }
  if (variant.zero != plan.zero_stage) result.family += fmt::format(" +zero{}", variant.zero);
  if (variant.recompute == Recompute::selective && !was_selective) result.family += " +selective-recompute";
  if (variant.recompute == Recompute::full && !was_full) result.family += " +recompute";
  return result;
}

// For a block variant (variant_of's, recompute_blocks 1): the fewest blocks per chunk whose
// recomputation makes it fit, set in `variant` with its label; false when there is no such
// variant: the plan fits keeping every activation (0 blocks: the variant without recompute), or
// only recomputing every block does (the full variant). A chunk keeps less the more of its blocks
// it recomputes, so the count is found by bisection over the memory walks alone (each counted in
// `stats`); the exhaustive and the pruned search both take this one count, so they weigh the same
// variant.
bool settle_recomputed_blocks(plans::Plan& variant, const plans::CompiledPlan& compiled, int64_t limit_bytes,
                              SearchStats& stats) {
  const auto fits_with = [&](int blocks) {
    variant.recompute_activations = blocks > 0;
    variant.recompute_blocks = blocks;
    ++stats.memory_walks;
    return plan_fits_memory(variant, compiled, limit_bytes);
  };
  int low = 1;  // the answer is at least this
  int high = plans::most_blocks_in_a_chunk(variant) - 1;
  const bool settled = high >= low && !fits_with(0) && fits_with(high);
  if (!settled) {
    variant.recompute_activations = true;
    variant.recompute_blocks = 1;
    return false;
  }
  while (low < high) {  // fits_with(high) holds
    const int middle = low + (high - low) / 2;
    if (fits_with(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  variant.recompute_activations = true;
  variant.recompute_blocks = high;
  variant.family += fmt::format(" +recompute-{}-block{}", high, high == 1 ? "" : "s");
  return true;
}

bool is_block_variant(const plans::Plan& variant, const plans::Plan& plan) {
  return variant.recompute_activations && variant.recompute_blocks > 0 && !plan.recompute_activations;
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

// Every variant priced, none skipped (the exhaustive search, which the pruned one must match):
// each one's fit walked, each one that fits timed; the answer is the fastest that fits (the first
// in variant order among equals), or the plan as it is, marked infeasible, when none does.
PricedPlan price_every_variant(const PlannerRequest& request, const plans::Plan& plan, SearchStats& stats) {
  const int64_t limit = request.effective_memory_limit();
  std::optional<plans::Plan> best;
  double best_seconds = std::numeric_limits<double>::infinity();
  const std::vector<MemoryVariant> variants = memory_variants(plan);
  for (size_t i = 0; i < variants.size(); ++i) {
    const bool is_original = i == 0;
    plans::Plan variant = is_original ? plan : variant_of(plan, variants[i]);
    if (!is_original && !shares_tied_weights(variant, stats)) continue;
    const plans::CompiledPlan compiled = plans::compile_plan(variant);
    if (is_block_variant(variant, plan) && !settle_recomputed_blocks(variant, compiled, limit, stats)) continue;
    ++stats.memory_walks;
    const std::optional<double> seconds = steady_pipeline_seconds_if_fits(variant, compiled, request.cluster, limit);
    if (!seconds) continue;
    ++stats.plans_simulated;
    if (*seconds < best_seconds) {
      best = std::move(variant);
      best_seconds = *seconds;
    }
  }
  if (best) return PricedPlan{std::move(*best), {}, true, best_seconds, true};
  ++stats.plans_simulated;
  Prediction prediction = steady_pipeline_prediction(plan, plans::compile_plan(plan), request.cluster);
  const double seconds = prediction.iteration_seconds;
  return PricedPlan{plan, std::move(prediction), false, seconds};
}

// A plan's compilation and its step-time bound for each ZeRO stage its variants take
// (compile_plan reads the stage but not the recompute settings, and a StepTimeBound holds what
// those do not change), each made when a variant of that stage first needs it.
class Compilations {
 public:
  explicit Compilations(const Cluster& cluster) : cluster_(cluster) {}

  const plans::CompiledPlan& of(const plans::Plan& variant) {
    std::optional<plans::CompiledPlan>& compiled = compiled_.at(static_cast<size_t>(variant.zero_stage));
    if (!compiled) compiled = plans::compile_plan(variant);
    return *compiled;
  }

  // ZeRO 3's per-pass parameter gathers are in the bound of its variants: what keeps the search
  // from timing the ZeRO-3 variants of long pipelines, which gather every layer per micro-batch.
  double bound(const plans::Plan& variant) {
    std::optional<StepTimeBound>& terms = bounds_.at(static_cast<size_t>(variant.zero_stage));
    if (!terms) terms.emplace(variant, of(variant), cluster_);
    return terms->seconds(variant);
  }

 private:
  const Cluster& cluster_;
  std::array<std::optional<plans::CompiledPlan>, 4> compiled_;
  std::array<std::optional<StepTimeBound>, 4> bounds_;
};

// A memory variant with its lower bound on the step time.
struct Candidate {
  int order = 0;  // in memory_variants: breaks ties as the exhaustive search does
  plans::Plan plan;
  double bound_seconds = 0;
};

// Every variant of `plan` a step can run (the plan itself first; the others left out are counted
// in `stats`), each with its bound.
std::vector<Candidate> bounded_variants(const plans::Plan& plan, Compilations& compilations, SearchStats& stats) {
  std::vector<Candidate> candidates;
  for (MemoryVariant v : memory_variants(plan)) {
    plans::Plan variant = candidates.empty() ? plan : variant_of(plan, v);
    if (!candidates.empty() && !shares_tied_weights(variant, stats)) continue;
    const double bound = compilations.bound(variant);
    candidates.push_back({static_cast<int>(candidates.size()), std::move(variant), bound});
  }
  return candidates;
}

}  // namespace

bool better_plan(const PricedPlan& candidate, const PricedPlan& incumbent, Ranking ranking) {
  if (ranking == Ranking::fitting_first && candidate.feasible != incumbent.feasible) return candidate.feasible;
  return candidate.seconds < incumbent.seconds;
}

bool cannot_beat(double lower_bound_seconds, double rival_seconds) {
  return lower_bound_seconds >= rival_seconds * (1.0 + kBoundRoundingMargin);
}

Rival rival_of(const PricedPlan& incumbent) { return {incumbent.seconds, incumbent.feasible, true}; }

std::optional<double> lowest_step_time_bound(const PlannerRequest& request, plans::Plan plan) {
  SearchStats uncounted;  // price_plan_against counts what it leaves out
  const std::optional<plans::Plan> runnable = with_shared_tied_weights(std::move(plan), uncounted);
  if (!runnable) return std::nullopt;
  // Its lowest variant is one of its own ZeRO stage: a higher stage only adds to the bound (stage 3
  // parameter gathers, stages 1-2 the gathers after the update). Recomputation adds forward passes,
  // but recomputing blocks also ends a sequence-parallel plan's gathers again before the backward
  // (Plan::regathers_input), which can cost more than the first block's forward: there each
  // recompute variant is bounded.
  const StepTimeBound terms(*runnable, plans::compile_plan(*runnable), request.cluster);
  double lowest = terms.seconds(*runnable);
  if (!runnable->regather_saved_inputs) return lowest;
  for (MemoryVariant v : memory_variants(*runnable)) {
    if (v.zero == runnable->zero_stage) lowest = std::min(lowest, terms.seconds(variant_of(*runnable, v)));
  }
  return lowest;
}

std::optional<PricedPlan> price_plan(const PlannerRequest& request, plans::Plan plan, SearchStats& stats) {
  std::optional<PricedPlan> priced = price_plan_against(request, std::move(plan), nullptr, Ranking::fastest, stats);
  if (priced) complete_prediction(request, *priced);
  return priced;
}

std::optional<PricedPlan> price_as_is(const PlannerRequest& request, const plans::Plan& plan, SearchStats& stats) {
  SearchStats counted_by_price_plan;  // a plan left out is counted once, by price_plan
  std::optional<plans::Plan> runnable = with_shared_tied_weights(plan, counted_by_price_plan);
  if (!runnable) return std::nullopt;
  ++stats.plans_simulated;
  Prediction prediction = steady_pipeline_prediction(*runnable, plans::compile_plan(*runnable), request.cluster);
  const bool feasible = peak_memory_bytes(prediction) <= request.effective_memory_limit();
  const double seconds = prediction.iteration_seconds;
  return PricedPlan{std::move(*runnable), std::move(prediction), feasible, seconds};
}

void complete_prediction(const PlannerRequest& request, PricedPlan& priced) {
  if (!priced.prediction_pending) return;
  priced.prediction = steady_pipeline_prediction(priced.plan, plans::compile_plan(priced.plan), request.cluster);
  priced.prediction_pending = false;
}

std::optional<PricedPlan> price_plan_against(const PlannerRequest& request, plans::Plan given, const Rival* rival,
                                             Ranking ranking, SearchStats& stats) {
  std::optional<plans::Plan> runnable = with_shared_tied_weights(std::move(given), stats);
  if (!runnable) return std::nullopt;
  const plans::Plan plan = std::move(*runnable);
  if (request.exhaustive) return price_every_variant(request, plan, stats);
  const int64_t limit = request.effective_memory_limit();
  // The time an answer that fits must beat: the rival's, except that a plan that fits beats any
  // rival that does not when fitting comes first.
  const double rival_seconds = rival != nullptr ? rival->seconds : std::numeric_limits<double>::infinity();
  const bool fit_wins = ranking == Ranking::fitting_first && rival != nullptr && !rival->feasible;
  const double bar = fit_wins ? std::numeric_limits<double>::infinity() : rival_seconds;
  // Whether an answer of `seconds` replaces a rival of `rival_seconds` (or the bar).
  const bool ties_win = rival == nullptr || !rival->wins_ties;
  const auto beats = [&](double seconds, double rival_time) {
    return seconds < rival_time || (ties_win && seconds == rival_time);
  };

  Compilations compilations(request.cluster);
  const plans::CompiledPlan& own = compilations.of(plan);
  std::vector<Candidate> candidates = bounded_variants(plan, compilations, stats);
  auto fits = [&](const Candidate& c) {
    if (is_block_variant(c.plan, plan)) {
      plans::Plan settled = c.plan;
      return settle_recomputed_blocks(settled, compilations.of(c.plan), limit, stats);
    }
    ++stats.memory_walks;
    return plan_fits_memory(c.plan, compilations.of(c.plan), limit);
  };
  // The step time of a variant that fits (nullopt when it does not), its fit decided by the
  // programs the timeline compiles anyway.
  auto seconds_if_fits = [&](const Candidate& c) {
    ++stats.memory_walks;
    std::optional<double> seconds =
        steady_pipeline_seconds_if_fits(c.plan, compilations.of(c.plan), request.cluster, limit);
    if (seconds) ++stats.plans_simulated;
    return seconds;
  };
  // Fastest first by bound. A variant whose bound is not below both the bar and the best that
  // fits so far can be neither the answer (but for a tie, which goes to the earlier variant) nor
  // beat the rival: it is not walked.
  std::vector<Candidate*> by_bound;
  for (Candidate& c : candidates) by_bound.push_back(&c);
  std::stable_sort(by_bound.begin(), by_bound.end(),
                   [](const Candidate* a, const Candidate* b) { return a->bound_seconds < b->bound_seconds; });
  // The variants are compared by their steady-state step times (sim/steady_pipeline.h: a long
  // pipeline's time from two short timelines); the answer gets the full simulation.
  const Candidate* best = nullptr;
  double best_seconds = std::numeric_limits<double>::infinity();
  std::vector<const Candidate*> unwalked;
  const auto cannot_win = [&](const Candidate* c) {
    const bool may_tie = best != nullptr && c->order < best->order &&
                         !cannot_beat(c->bound_seconds, best_seconds * (1.0 + kBoundRoundingMargin));
    return cannot_beat(c->bound_seconds, std::min(bar, best_seconds)) && !may_tie;
  };
  for (Candidate* c : by_bound) {
    if (cannot_win(c)) {
      unwalked.push_back(c);
      continue;
    }
    if (is_block_variant(c->plan, plan)) {
      // Bounded with one block recomputed; the settled count bounds it higher.
      if (!settle_recomputed_blocks(c->plan, compilations.of(c->plan), limit, stats)) continue;
      c->bound_seconds = compilations.bound(c->plan);
      if (cannot_win(c)) {
        unwalked.push_back(c);
        continue;
      }
    }
    const std::optional<double> seconds = seconds_if_fits(*c);
    if (!seconds) continue;
    if (best == nullptr || *seconds < best_seconds || (*seconds == best_seconds && c->order < best->order)) {
      best = c;
      best_seconds = *seconds;
    }
  }
  if (best != nullptr) {
    // The answer is `best` (no variant left unwalked is faster); it wins only below the bar.
    if (!beats(best_seconds, bar)) return std::nullopt;
    return PricedPlan{best->plan, {}, true, best_seconds, true};
  }
  // Nothing walked fits. A variant left unwalked that fits makes the answer no faster than the
  // bar; otherwise the answer is the plan as it is, marked infeasible, which beats only a slower
  // rival (one that does not fit either, when fitting comes first).
  if (ranking == Ranking::fitting_first && rival != nullptr && rival->feasible) return std::nullopt;
  const Candidate& original = candidates.front();
  if (cannot_beat(original.bound_seconds, rival_seconds)) return std::nullopt;
  if (std::any_of(unwalked.begin(), unwalked.end(), [&](const Candidate* c) { return fits(*c); })) return std::nullopt;
  ++stats.plans_simulated;
  Prediction prediction = steady_pipeline_prediction(original.plan, own, request.cluster);
  const double seconds = prediction.iteration_seconds;
  if (!beats(seconds, rival_seconds)) return std::nullopt;
  return PricedPlan{original.plan, std::move(prediction), false, seconds};
}

}  // namespace splitbrain::sim
