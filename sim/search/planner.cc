#include "sim/search/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "model/errors.h"
#include "plans/compiled_plan.h"
#include "sim/search/context_parallel_search.h"
#include "sim/search/families.h"
#include "sim/search/mesh_search.h"
#include "sim/search/parallel_search.h"
#include "sim/search/plan_pricing.h"

namespace splitbrain::sim {
namespace {

bool same_plan(const plans::Plan& a, const plans::Plan& b) {
  return a.mesh == b.mesh && a.layers == b.layers && a.stage_of_layer == b.stage_of_layer && a.schedule == b.schedule &&
         a.virtual_stages == b.virtual_stages && a.micro_batches == b.micro_batches && a.zero_stage == b.zero_stage &&
         a.recompute_activations == b.recompute_activations && a.recompute_blocks == b.recompute_blocks &&
         a.recompute_attention == b.recompute_attention && a.regather_saved_inputs == b.regather_saved_inputs;
}

// Adds a priced plan, or merges its label into an identical plan already listed (SplitBrain
// with groups of N is model parallelism's classifier split, a SoyBean optimum may coincide with
// a named family...).
void add_unique(std::vector<PricedPlan>& plans, PricedPlan plan) {
  for (PricedPlan& existing : plans) {
    if (same_plan(existing.plan, plan.plan)) {
      if (existing.plan.family != plan.plan.family) existing.plan.family += " = " + plan.plan.family;
      return;
    }
  }
  plans.push_back(std::move(plan));
}

// Prices `count` plans on the search's threads, `price(i, counts)` each into its own slot and
// counts, then lists them in order: what add_unique keeps, and the counts, are those of pricing
// them one after another.
template <typename Price>
void price_in_parallel(const PlannerRequest& request, size_t count, const Price& price, SearchStats& stats,
                       std::vector<PricedPlan>& listed) {
  std::vector<std::vector<PricedPlan>> found(count);
  std::vector<SearchStats> counts(count);
  run_in_parallel(count, search_thread_count(request), [&](size_t i) { found[i] = price(i, counts[i]); });
  for (size_t i = 0; i < count; ++i) {
    add_stats(stats, counts[i]);
    for (PricedPlan& plan : found[i]) add_unique(listed, std::move(plan));
  }
}

}  // namespace

void validate_request(const PlannerRequest& request) {
  if (request.devices < 1) throw InputError(fmt::format("devices: must be at least 1, got {}", request.devices));
  if (request.devices > rank_count(request.cluster)) {
    throw InputError(
        fmt::format("devices: cluster '{}' has {} devices; {} cannot be placed on it (use a larger cluster file)",
                    request.cluster.name, rank_count(request.cluster), request.devices));
  }
  if (request.global_batch < 1)
    throw InputError(fmt::format("batch: must be at least 1, got {}", request.global_batch));
  if (request.memory_limit_bytes < 1) throw InputError("memory-limit: must be positive");
}

PlannerResult plan_training(const PlannerRequest& request, const std::function<void(std::string_view)>& progress) {
  validate_request(request);
  const auto started = std::chrono::steady_clock::now();
  auto say = [&](std::string_view line) {
    if (progress) progress(line);
  };
  PlannerResult result;
  SearchStats& stats = result.stats;

  say("named families: data-parallel, model-parallel, splitbrain, gholami-grid, domain-parallel");
  std::vector<plans::Plan> named;
  if (auto dp = data_parallel_plan(request)) named.push_back(std::move(*dp));
  if (auto mp = model_parallel_plan(request)) named.push_back(std::move(*mp));
  for (auto* family : {&splitbrain_plans, &gholami_grid_plans, &domain_parallel_plans}) {
    for (plans::Plan& plan : (*family)(request)) named.push_back(std::move(plan));
  }
  // A named family is listed as it is when it fits (the baseline a user compares with, and what a
  // trainer without ZeRO can run), and as its fastest variant that fits when that is another.
  const auto price_named = [&](size_t i, SearchStats& counts) {
    std::vector<PricedPlan> listed;
    if (std::optional<PricedPlan> as_is = price_as_is(request, named[i], counts); as_is && as_is->feasible)
      listed.push_back(std::move(*as_is));
    if (std::optional<PricedPlan> priced = price_plan(request, named[i], counts)) listed.push_back(std::move(*priced));
    return listed;
  };
  price_in_parallel(request, named.size(), price_named, stats, result.plans);

  say("searched: soybean per-layer tilings");
  for (PricedPlan& plan : soybean_plans(request, stats)) add_unique(result.plans, std::move(plan));
  say("searched: pipelines (stage partition and micro-batches)");
  for (PricedPlan& plan : pipeline_plans(request, stats)) add_unique(result.plans, std::move(plan));
  say("searched: every mesh for the overall best");
  for (PricedPlan& best : best_plans(request, stats, progress)) add_unique(result.plans, std::move(best));
  // Megatron's sequence parallelism for every plan found with tensor parallelism: the same
  // layouts with the per-token layers split along the sequence (plans/sequence_parallel.h),
  // priced as a plan of its own (with ZeRO or recomputation only if it needs them to fit).
  say("sequence parallelism for the plans with tensor parallelism");
  const std::vector<PricedPlan> found = result.plans;
  const auto price_twin = [&](size_t i, SearchStats& counts) {
    std::vector<PricedPlan> listed;
    if (found[i].plan.regather_saved_inputs) return listed;  // already sequence-parallel
    if (std::optional<plans::Plan> sequence = sequence_parallel_twin(found[i].plan)) {
      if (std::optional<PricedPlan> priced = price_plan(request, std::move(*sequence), counts))
        listed.push_back(std::move(*priced));
    }
    return listed;
  };
  price_in_parallel(request, found.size(), price_twin, stats, result.plans);
  if (result.plans.empty()) {
    throw InputError(fmt::format("batch: no plan can split a batch of {} over {} devices of {}", request.global_batch,
                                 request.devices, request.model_spec));
  }

  for (const PricedPlan& plan : result.plans) {
    const bool plain = plan.plan.zero_stage == 0 && !plan.plan.recompute_activations && !plan.plan.recompute_attention;
    if (plan.plan.family.starts_with("data-parallel") && (plain || result.data_parallel_peak_bytes == 0))
      result.data_parallel_peak_bytes = peak_memory_bytes(plan.prediction);
  }
  PlannerRequest one_device = request;
  one_device.devices = 1;
  if (auto single = data_parallel_plan(one_device)) {
    ++stats.plans_simulated;
    result.single_device_seconds = simulate(*single, plans::compile_plan(*single), request.cluster).iteration_seconds;
  }
  // Plans that fit come first, each group by predicted step time: rank 1 is the plan to run.
  std::stable_sort(result.plans.begin(), result.plans.end(), [](const PricedPlan& a, const PricedPlan& b) {
    if (a.feasible != b.feasible) return a.feasible;
    return a.prediction.iteration_seconds < b.prediction.iteration_seconds;
  });
  result.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace splitbrain::sim
