// How long one simulation takes: compile a plan (layouts, redistribution lists, buckets), then
// predict its step (costs, pipeline timeline, memory and bytes of every rank). The target is
// vgg16 on 64 devices of dgx-a100-80g in under 5 ms.

#include <benchmark/benchmark.h>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "sim/cluster_presets.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;

// A plan on `mesh` where parameter layers take `with_parameters` and the others `without`.
plans::Plan plan_by_parameters(const std::string& model_spec, plans::Mesh mesh, int64_t batch,
                               LayerSharding with_parameters, LayerSharding without) {
  return plans::build_plan(model_spec, std::move(mesh), batch, [&](const model::Layer& layer) {
    return layer.cost.params > 0 ? with_parameters : without;
  });
}

void simulate_plan(benchmark::State& state, const plans::Plan& plan) {
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  for (auto _ : state) {
    const Prediction prediction = simulate(plan, plans::compile_plan(plan), cluster);
    benchmark::DoNotOptimize(prediction.iteration_seconds);
  }
  state.counters["plans_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void Vgg16DataParallel64(benchmark::State& state) {
  simulate_plan(state,
                plan_by_parameters("vgg16", plans::Mesh({{"data", 64}}), 2048, {{0}, {}, {}, {}}, {{0}, {}, {}, {}}));
}

void Vgg16Grid8x8(benchmark::State& state) {
  // Gholami's integrated grid: batch over data, output features over model (8 inside a node).
  simulate_plan(state, plan_by_parameters("vgg16", plans::Mesh({{"data", 8}, {"model", 8}}), 2048, {{0}, {1}, {}, {}},
                                          {{0}, {}, {}, {}}));
}

BENCHMARK(Vgg16DataParallel64)->Unit(benchmark::kMillisecond);
BENCHMARK(Vgg16Grid8x8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace splitbrain::sim

BENCHMARK_MAIN();
