#include "sim/search/searched_plans.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/block_boundaries.h"
#include "model/statistics.h"
#include "plans/tied_weights.h"
#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "sim/collective_cost.h"
#include "sim/search/cost_table.h"
#include "sim/search/parallel_search.h"
#include "sim/search/plan_pricing.h"
#include "sim/search/sharding_search.h"
#include "sim/search/stage_partition.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;

// Stage hand-over costs: cut_seconds[i] sends, forward and back, every tensor produced before
// layer i and read at or after it, between the first two ranks of the pipe axis.
std::vector<double> cut_seconds(const PlannerRequest& request, CostTable& table, const SearchMesh& mesh,
                                const std::vector<LayerSharding>& layers) {
  const model::Model& net = table.model();
  const plans::Plan& skeleton = table.skeleton();
  const std::vector<int> pipe_group = skeleton.mesh.group(0, {mesh.pipe});
  std::vector<double> send_of_output(static_cast<size_t>(net.size()), 0.0);
  for (int v = 0; v < net.size(); ++v) {
    const model::Layer& layer = net.layer(v);
    const plans::LayerLayouts* l = table.layouts(v, layers[static_cast<size_t>(v)]);
    const int64_t bytes = plans::local_element_count(l->output, skeleton.mesh,
                                                     plans::activation_shape(layer, skeleton.micro_batch_size())) *
                          model::output_element_bytes(layer, skeleton.dtype);
    send_of_output[static_cast<size_t>(v)] = 2 * send_seconds(request.cluster, pipe_group[0], pipe_group[1], bytes);
  }
  const std::vector<int> last_reader = model::last_readers(net);
  std::vector<double> cuts(static_cast<size_t>(net.size()) + 1, 0.0);
  for (int i = 1; i < net.size(); ++i) {
    for (int u = 0; u < i; ++u) {
      if (last_reader[static_cast<size_t>(u)] >= i)
        cuts[static_cast<size_t>(i)] += send_of_output[static_cast<size_t>(u)];
    }
  }
  return cuts;
}

// The chunk (stage, or virtual stage when `chunks` is a multiple of the stages) of each layer.
std::optional<std::vector<int>> partition(const PlannerRequest& request, CostTable& table, const SearchMesh& mesh,
                                          const std::vector<LayerSharding>& layers, int micro_batches,
                                          int64_t memory_limit_bytes, int chunks) {
  const model::Model& net = table.model();
  StagePartitionInput input;
  for (int v = 0; v < net.size(); ++v) {
    const LayerSharding& own = layers[static_cast<size_t>(v)];
    const ChoiceCost& cost = table.layer_cost(v, own);
    double seconds = cost.seconds_per_micro_batch;
    const auto& inputs = net.layer(v).inputs;
    for (size_t p = 0; p < inputs.size(); ++p) {
      seconds += table.edge_seconds(v, static_cast<int>(p), layers[static_cast<size_t>(inputs[p])], own);
    }
    input.layer_seconds.push_back(seconds);
    input.layer_fixed_bytes.push_back(cost.fixed_bytes);
    input.layer_activation_bytes.push_back(cost.activation_bytes);
  }
  input.cut_seconds = cut_seconds(request, table, mesh, layers);
  input.stages = chunks;
  input.micro_batches = micro_batches;
  input.memory_limit_bytes = memory_limit_bytes;
  input.may_start_stage = stage_starts_between_blocks(net, input.stages);
  return partition_stages(input);
}

LayerSharding batch_over_data(const SearchMesh& mesh) {
  LayerSharding sharding;
  if (mesh.data >= 0) sharding.batch = {mesh.data};
  return sharding;
}

}  // namespace

std::vector<int> micro_batch_options(int64_t batch, int stages) {
  if (stages <= 1) return {1};
  std::vector<int> options;
  for (int factor : {1, 2, 4, 8}) {
    const int m = stages * factor;
    if (batch % m == 0) options.push_back(m);
  }
  return options;
}

std::vector<int> micro_batch_counts(int64_t batch, int stages, int data_replicas) {
  if (stages <= 1) return {1};
  std::vector<int> counts;
  if (data_replicas < 1 || batch % data_replicas != 0) return counts;
  const int64_t replica_batch = batch / data_replicas;
  for (int64_t samples = 1; samples <= replica_batch / stages; ++samples) {
    if (replica_batch % samples != 0) continue;
    const int64_t count = replica_batch / samples;
    if (count <= std::numeric_limits<int>::max()) counts.push_back(static_cast<int>(count));
  }
  return counts;
}

std::vector<plans::Plan> interleaved_plans(const PlannerRequest& request, const SearchMesh& mesh,
                                           const plans::Plan& pipeline) {
  std::vector<plans::Plan> plans;
  const int stages = pipeline.stage_count();
  if (stages < 2 || pipeline.micro_batches % stages != 0) return plans;
  plans::Plan skeleton = skeleton_plan(request, mesh.mesh);
  skeleton.micro_batches = pipeline.micro_batches;
  skeleton.pipe_axis = mesh.pipe;
  CostTable table(skeleton, request.cluster, std::min(skeleton.micro_batches, stages));
  // The schedule hands a tensor only from a chunk to the next: chunks start between blocks.
  const std::vector<bool> starts = model::block_starts(*request.model);
  const auto block_count = std::count(starts.begin(), starts.end(), true) + 1;
  for (int chunks_per_stage = 2; chunks_per_stage <= kMaxChunksPerStage; ++chunks_per_stage) {
    const int chunks = stages * chunks_per_stage;
    if (chunks > block_count) break;
    // Chunks are cut for time alone: their memory is the stage's sum, which pricing walks.
    auto chunk_of_layer = partition(request, table, mesh, pipeline.layers, skeleton.micro_batches,
                                    std::numeric_limits<int64_t>::max(), chunks);
    if (!chunk_of_layer) continue;
    plans::Plan plan = pipeline;
    plan.stage_of_layer = *chunk_of_layer;
    plan.virtual_stages = chunks_per_stage;
    plan.schedule = plans::PipelineSchedule::interleaved_one_f_one_b;
    plan.family = fmt::format("{} +interleaved {}", pipeline.family, chunks_per_stage);
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::optional<plans::Plan> searched_plan(const PlannerRequest& request, const SearchMesh& mesh, int micro_batches,
                                         const std::vector<LayerSharding>* given, SearchStats& stats) {
  plans::Plan skeleton = skeleton_plan(request, mesh.mesh);
  if (request.global_batch % micro_batches != 0) return std::nullopt;
  skeleton.micro_batches = micro_batches;
  skeleton.pipe_axis = mesh.pipe;
  const int stages = mesh.size_of(mesh.pipe);
  CostTable table(skeleton, request.cluster, std::min(micro_batches, stages));
  ++stats.meshes_searched;

  std::vector<LayerSharding> layers(static_cast<size_t>(skeleton.model->size()));
  if (given == nullptr) {
    ShardingSearchOptions options;
    // Without a pipeline one rank holds everything; with one, the stages share the load and
    // the partition enforces each stage's limit.
    const int64_t limit = request.effective_memory_limit();
    options.memory_limit_bytes = limit > std::numeric_limits<int64_t>::max() / stages ? limit : limit * stages;
    auto found = search_shardings(table, mesh, options);
    if (!found) {
      // Nothing fits with every activation kept and the model states whole: search for time,
      // and let price_plan try recomputation and ZeRO before the plan is called infeasible.
      options.memory_limit_bytes = std::numeric_limits<int64_t>::max();
      found = search_shardings(table, mesh, options);
    }
    if (!found) {
      stats.layer_prices += table.evaluations();
      return std::nullopt;
    }
    layers = found->layers;
  } else {
    layers = *given;
    for (int v = 0; v < skeleton.model->size(); ++v) {
      if (!plans::chooses_own_sharding(skeleton.model->layer(v))) continue;
      if (table.layouts(v, layers[static_cast<size_t>(v)]) == nullptr) return std::nullopt;
    }
    fill_followers(table, layers);
  }
  skeleton.layers = layers;
  if (mesh.pipe >= 0) {
    auto stage_of_layer =
        partition(request, table, mesh, layers, micro_batches, request.effective_memory_limit(), stages);
    // As for the shardings: no cut fits as it is, so cut for time; recomputation and ZeRO come next.
    if (!stage_of_layer) {
      stage_of_layer =
          partition(request, table, mesh, layers, micro_batches, std::numeric_limits<int64_t>::max(), stages);
    }
    stats.layer_prices += table.evaluations();
    if (!stage_of_layer) return std::nullopt;
    skeleton.stage_of_layer = *stage_of_layer;
    skeleton.schedule = plans::PipelineSchedule::one_f_one_b;
  } else {
    stats.layer_prices += table.evaluations();
  }
  // The DP prices each layer alone; a tied embedding then takes its head's split, which the step
  // can share (plans/tied_weights.h).
  if (!plans::tied_weight_problem(skeleton).empty()) {
    if (std::optional<plans::Plan> following = plans::with_tables_following_heads(skeleton)) return following;
  }
  return skeleton;
}

std::vector<PricedPlan> soybean_plans(const PlannerRequest& request, SearchStats& stats) {
  std::vector<PricedPlan> result;
  for (int model_axis : divisors(request.devices)) {
    if (model_axis < 2 || model_axis > request.max_model_axis) continue;
    const SearchMesh mesh = make_search_mesh(1, request.devices / model_axis, 1, model_axis);
    auto plan = searched_plan(request, mesh, 1, nullptr, stats);
    if (!plan) continue;
    plan->family = fmt::format("soybean m={}", model_axis);
    if (std::optional<PricedPlan> priced = price_plan(request, std::move(*plan), stats))
      result.push_back(std::move(*priced));
  }
  return result;
}

std::vector<PricedPlan> pipeline_plans(const PlannerRequest& request, SearchStats& stats) {
  std::vector<int> stage_counts;
  for (int stages : divisors(request.devices)) {
    if (stages >= 2 && stages <= request.max_pipeline_stages) stage_counts.push_back(stages);
  }
  // Each stage count keeps its own fastest plan: the counts are searched on several threads.
  std::vector<std::optional<PricedPlan>> best(stage_counts.size());
  std::vector<SearchStats> counted(stage_counts.size());
  run_in_parallel(stage_counts.size(), search_thread_count(request), [&](size_t i) {
    const int stages = stage_counts[i];
    const SearchMesh mesh = make_search_mesh(stages, request.devices / stages, 1, 1);
    const std::vector<LayerSharding> batch_split(static_cast<size_t>(request.model->size()), batch_over_data(mesh));
    for (int micro : micro_batch_options(request.global_batch, stages)) {
      auto plan = searched_plan(request, mesh, micro, &batch_split, counted[i]);
      if (!plan) continue;
      plan->family = fmt::format("pipeline {} stages", stages);
      // Only a plan that could be faster than the best so far is timed in full.
      const std::optional<Rival> rival = best[i] ? std::optional(rival_of(*best[i])) : std::nullopt;
      auto priced =
          price_plan_against(request, std::move(*plan), rival ? &*rival : nullptr, Ranking::fastest, counted[i]);
      if (priced && (!best[i] || better_plan(*priced, *best[i], Ranking::fastest))) best[i] = std::move(*priced);
    }
    if (best[i]) complete_prediction(request, *best[i]);
  });
  std::vector<PricedPlan> result;
  for (size_t i = 0; i < stage_counts.size(); ++i) {
    add_stats(stats, counted[i]);
    if (best[i]) result.push_back(std::move(*best[i]));
  }
  return result;
}

}  // namespace splitbrain::sim
