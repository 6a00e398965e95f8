#include "sim/search/mesh_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <compare>
#include <mutex>
#include <vector>

#include "sim/search/context_parallel_search.h"
#include "sim/search/parallel_search.h"
#include "sim/search/plan_pricing.h"

namespace splitbrain::sim {
namespace {

bool model_has_convolutions(const model::Model& net) {
  return std::any_of(net.layers().begin(), net.layers().end(),
                     [](const model::Layer& l) { return l.kind == model::OpKind::conv2d; });
}

// A candidate's place in the one-thread order: ties go to the earlier.
struct SearchOrder {
  size_t mesh = 0;
  int candidate = 0;
  friend auto operator<=>(const SearchOrder&, const SearchOrder&) = default;
};

struct Candidate {
  plans::Plan plan;
  SearchOrder order;
  double bound_seconds = 0;       // no variant of the plan is faster
  bool context_parallel = false;  // on a context-parallel mesh (context_parallel_search.h)
};

// The best plan so far, shared by the search threads.
class SharedBest {
 public:
  // What a candidate at `order` must beat; false when there is nothing yet.
  bool rival_for(SearchOrder order, Rival& rival) {
    const std::lock_guard lock(mutex_);
    if (!best_) return false;
    rival = rival_of(*best_);
    rival.wins_ties = best_order_ < order;
    return true;
  }

  // Whether the best so far fits and is certainly faster than anything bounded by `bound_seconds`.
  bool settled_below(double bound_seconds) {
    const std::lock_guard lock(mutex_);
    return best_ && best_->feasible && cannot_beat(bound_seconds, best_->seconds);
  }

  // Keeps `priced` when it is better (fitting first, then faster), or as good and earlier.
  void offer(PricedPlan priced, SearchOrder order) {
    const std::lock_guard lock(mutex_);
    const bool replaces = !best_ || better_plan(priced, *best_, Ranking::fitting_first) ||
                          (!better_plan(*best_, priced, Ranking::fitting_first) && order < best_order_);
    if (!replaces) return;
    best_ = std::move(priced);
    best_order_ = order;
  }

  std::string summary() {
    const std::lock_guard lock(mutex_);
    return best_ ? fmt::format("{:.3f} s{}", best_->seconds, best_->feasible ? "" : " (over memory)")
                 : std::string("none");
  }

  std::optional<PricedPlan> take() { return std::move(best_); }

  SearchOrder order() {
    const std::lock_guard lock(mutex_);
    return best_order_;
  }

 private:
  std::mutex mutex_;
  std::optional<PricedPlan> best_;
  SearchOrder best_order_;
};

// Every candidate of one mesh, in the mesh's order, each with its bound.
std::vector<Candidate> mesh_candidates(const PlannerRequest& request, const SearchMesh& mesh, size_t mesh_index,
                                       SearchStats& stats) {
  std::vector<Candidate> candidates;
  const bool context_parallel = mesh.space >= 0 && searches_context_parallelism(*request.model);
  const auto add_one = [&](plans::Plan plan) {
    const SearchOrder order{mesh_index, static_cast<int>(candidates.size())};
    // A plan no step can run is left out (and counted) when it is priced.
    const double bound = lowest_step_time_bound(request, plan).value_or(0.0);
    candidates.push_back({std::move(plan), order, bound, context_parallel});
  };
  // A plan and its sequence-parallel twin (plans/sequence_parallel.h), where it has one.
  const auto add = [&](plans::Plan plan) {
    if (std::optional<plans::Plan> twin = sequence_parallel_twin(plan)) add_one(std::move(*twin));
    add_one(std::move(plan));
  };
  // The sharding DP runs once per mesh, at the first micro-batch count; the others reuse its
  // choices and only re-cut the stages (the choices barely move with the micro-batch size).
  // A small micro-batch can be too small for them (a batch split over more ranks than it has
  // samples): the DP then runs again.
  std::optional<std::vector<plans::LayerSharding>> layers;
  const int stages = mesh.size_of(mesh.pipe);
  // A context-parallel mesh builds only the micro-batch counts the mesh without it cannot
  // (context_parallel_search.h).
  const std::vector<int> counts =
      context_parallel ? context_parallel_micro_batch_counts(request.global_batch, stages, mesh.size_of(mesh.data),
                                                             mesh.size_of(mesh.space))
                       : micro_batch_counts(request.global_batch, stages, mesh.size_of(mesh.data));
  const std::string family = context_parallel ? fmt::format("best +cp {}", mesh.size_of(mesh.space)) : "best";
  for (int micro : counts) {
    auto plan = searched_plan(request, mesh, micro, layers ? &*layers : nullptr, stats);
    if (!plan && layers) plan = searched_plan(request, mesh, micro, nullptr, stats);
    if (!plan) continue;
    if (!layers) layers = plan->layers;
    plan->family = family;
    // Interleaved 1F1B: a smaller bubble for more hand-overs.
    for (plans::Plan& interleaved : interleaved_plans(request, mesh, *plan)) add(std::move(interleaved));
    add(std::move(*plan));
  }
  return candidates;
}

}  // namespace

std::vector<PricedPlan> best_plans(const PlannerRequest& request, SearchStats& stats,
                                   const std::function<void(std::string_view)>& progress) {
  const bool spatial = model_has_convolutions(*request.model);
  const int devices_per_node = request.cluster.levels.front().fan_out;
  const int max_model = std::min(request.max_model_axis, devices_per_node);
  std::vector<SearchMesh> meshes = enumerate_search_meshes(request.devices, request.max_pipeline_stages,
                                                           spatial ? request.max_space_axis : 1, max_model);
  // Context-parallel meshes last: a tie goes to the plan without the gathers.
  for (SearchMesh& mesh : context_parallel_meshes(request, max_model)) meshes.push_back(std::move(mesh));
  const int threads = search_thread_count(request);
  std::mutex progress_mutex;
  const auto say = [&](const std::string& line) {
    if (!progress) return;
    const std::lock_guard lock(progress_mutex);
    progress(line);
  };

  // Build and bound every candidate, mesh by mesh.
  std::vector<std::vector<Candidate>> by_mesh(meshes.size());
  std::vector<SearchStats> build_stats(meshes.size());
  run_in_parallel(meshes.size(), threads, [&](size_t m) {
    say(fmt::format("mesh {}/{} {}: building candidates", m + 1, meshes.size(), meshes[m].mesh.to_string()));
    by_mesh[m] = mesh_candidates(request, meshes[m], m, build_stats[m]);
  });
  std::vector<Candidate> candidates;
  for (std::vector<Candidate>& mesh : by_mesh) {
    for (Candidate& c : mesh) candidates.push_back(std::move(c));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.bound_seconds < b.bound_seconds; });

  // Price them, lowest bound first, until the best that fits is below every bound left; the
  // context-parallel candidates until the best of them is too.
  const bool any_context_parallel =
      std::any_of(candidates.begin(), candidates.end(), [](const Candidate& c) { return c.context_parallel; });
  SharedBest shared;
  SharedBest shared_context_parallel;
  const auto settled_below = [&](double bound_seconds, bool context_parallel) {
    if (!shared.settled_below(bound_seconds)) return false;
    return !context_parallel || shared_context_parallel.settled_below(bound_seconds);
  };
  std::vector<SearchStats> price_stats(candidates.size());
  std::atomic<size_t> priced{0};
  std::atomic<bool> settled{false};
  const size_t tenth = std::max<size_t>(1, candidates.size() / 10);
  run_in_parallel(candidates.size(), threads, [&](size_t i) {
    Candidate& candidate = candidates[i];
    if (settled) return;
    if (!request.exhaustive) {
      if (settled_below(candidate.bound_seconds, any_context_parallel)) {
        settled = true;  // the bounds only grow from here
        return;
      }
      if (settled_below(candidate.bound_seconds, candidate.context_parallel)) return;
    }
    // A context-parallel plan need only beat the best of its kind to be kept.
    SharedBest& kind = candidate.context_parallel ? shared_context_parallel : shared;
    Rival rival;
    const bool has_rival = kind.rival_for(candidate.order, rival);
    auto answer = price_plan_against(request, std::move(candidate.plan), has_rival ? &rival : nullptr,
                                     Ranking::fitting_first, price_stats[i]);
    if (answer) {
      if (candidate.context_parallel) shared_context_parallel.offer(*answer, candidate.order);
      shared.offer(std::move(*answer), candidate.order);
    }
    if (const size_t done = ++priced; done % tenth == 0) {
      say(fmt::format("priced {} of {} candidates, lowest bound first; best so far {}", done, candidates.size(),
                      shared.summary()));
    }
  });
  say(fmt::format("priced {} of {} candidates; the others' bounds are above the best, {}", priced.load(),
                  candidates.size(), shared.summary()));

  for (const SearchStats& part : build_stats) add_stats(stats, part);
  for (const SearchStats& part : price_stats) add_stats(stats, part);
  // The overall best may be the context-parallel one: listed once.
  const bool same = shared.order() == shared_context_parallel.order();
  std::vector<PricedPlan> best;
  for (SharedBest* kind : {&shared, &shared_context_parallel}) {
    std::optional<PricedPlan> plan = kind->take();
    if (!plan || (kind == &shared_context_parallel && same && !best.empty())) continue;
    complete_prediction(request, *plan);
    best.push_back(std::move(*plan));
  }
  return best;
}

}  // namespace splitbrain::sim
