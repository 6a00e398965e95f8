// How fast the planner ranks plans. Targets (issue "Planner"): vgg16 on 64 devices of
// dgx-a100-80g in under 1 s on one core; the GPT-3 175B-shaped model on 1024 devices in under
// 10 s; at least 10,000 plan evaluations per second.
//
// "Plan evaluation" is measured two ways, both reported: the search's evaluator (a complete
// per-layer assignment priced from the memoised layer and edge costs, as the DP prices its
// candidates) and the full simulator (compile + timeline + memory + bytes of every rank).

#include <benchmark/benchmark.h>

#include <random>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "sim/cluster_presets.h"
#include "sim/search/planner.h"
#include "sim/search/sharding_search.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

PlannerRequest request(const std::string& model_spec, const std::string& cluster, int devices, int64_t batch,
                       model::DType dtype, plans::OptimizerKind optimizer) {
  PlannerRequest r;
  r.model = std::make_shared<model::Model>(model::build_zoo_model(model_spec));
  r.model_spec = model_spec;
  r.cluster = cluster_preset(cluster);
  r.devices = devices;
  r.global_batch = batch;
  r.dtype = dtype;
  r.optimizer.kind = optimizer;
  return r;
}

void PlanVgg16On64(benchmark::State& state) {
  const PlannerRequest r =
      request("vgg16", "dgx-a100-80g", 64, 2048, model::DType::fp32, plans::OptimizerKind::sgd_momentum);
  for (auto _ : state) benchmark::DoNotOptimize(plan_training(r).plans.size());
}

void PlanGpt3On1024(benchmark::State& state) {
  const PlannerRequest r =
      request("gpt3-175b", "dgx-a100-80g", 1024, 2048, model::DType::bf16, plans::OptimizerKind::adam);
  for (auto _ : state) benchmark::DoNotOptimize(plan_training(r).plans.size());
}

// Random complete assignments of vgg16 on {data: 8, model: 8}, priced by the search evaluator.
void EvaluateAssignmentsVgg16(benchmark::State& state) {
  const PlannerRequest r =
      request("vgg16", "dgx-a100-80g", 64, 2048, model::DType::fp32, plans::OptimizerKind::sgd_momentum);
  const SearchMesh mesh = make_search_mesh(1, 8, 1, 8);
  CostTable table(skeleton_plan(r, mesh.mesh), r.cluster, 1);
  const model::Model& net = *r.model;
  std::vector<std::vector<plans::LayerSharding>> candidates(static_cast<size_t>(net.size()));
  for (int v = 0; v < net.size(); ++v) {
    if (plans::chooses_own_sharding(net.layer(v)))
      candidates[static_cast<size_t>(v)] = decision_candidates(table, v, mesh);
  }
  std::mt19937 random(7);
  std::vector<plans::LayerSharding> layers(static_cast<size_t>(net.size()));
  for (auto _ : state) {
    for (int v = 0; v < net.size(); ++v) {
      const auto& options = candidates[static_cast<size_t>(v)];
      if (!options.empty()) layers[static_cast<size_t>(v)] = options[random() % options.size()];
    }
    fill_followers(table, layers);
    benchmark::DoNotOptimize(assignment_seconds(table, layers));
  }
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The same random assignments, each compiled and simulated in full.
void SimulateAssignmentsVgg16(benchmark::State& state) {
  const PlannerRequest r =
      request("vgg16", "dgx-a100-80g", 64, 2048, model::DType::fp32, plans::OptimizerKind::sgd_momentum);
  const SearchMesh mesh = make_search_mesh(1, 8, 1, 8);
  plans::Plan plan = skeleton_plan(r, mesh.mesh);
  CostTable table(plan, r.cluster, 1);
  const model::Model& net = *r.model;
  std::vector<std::vector<plans::LayerSharding>> candidates(static_cast<size_t>(net.size()));
  for (int v = 0; v < net.size(); ++v) {
    if (plans::chooses_own_sharding(net.layer(v)))
      candidates[static_cast<size_t>(v)] = decision_candidates(table, v, mesh);
  }
  std::mt19937 random(7);
  for (auto _ : state) {
    for (int v = 0; v < net.size(); ++v) {
      const auto& options = candidates[static_cast<size_t>(v)];
      if (!options.empty()) plan.layers[static_cast<size_t>(v)] = options[random() % options.size()];
    }
    fill_followers(table, plan.layers);
    benchmark::DoNotOptimize(simulate(plan, plans::compile_plan(plan), r.cluster).iteration_seconds);
  }
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(PlanVgg16On64)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(PlanGpt3On1024)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(EvaluateAssignmentsVgg16)->Unit(benchmark::kMicrosecond);
BENCHMARK(SimulateAssignmentsVgg16)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace splitbrain::sim

BENCHMARK_MAIN();
