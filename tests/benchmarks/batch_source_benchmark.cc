// What serving one step's input costs the host when the next step is read ahead (the cuda
// backend's BatchPrefetch::next_step): DatasetBatches on synthetic CIFAR-shaped samples, one
// rank's whole batch, with the step's compute stood in for by a pause (untimed) in which the
// worker reads the next block. On a GPU this host time sits between the step's start and its
// first kernel, so it should be a few microseconds, not the step's read.

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>

#include "exec/data/synthetic.h"
#include "tools/training/dataset_batches.h"

namespace splitbrain::tools {
namespace {

void ServePrefetchedStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  exec::data::SyntheticOptions options;
  options.shape = {3, 32, 32};
  options.train_samples = 50000;
  DatasetBatches batches(std::make_unique<exec::data::SyntheticDataset>(options, exec::data::Split::kTrain), batch, 1,
                         BatchPrefetch::next_step);
  int64_t step = 0;
  batches.images_held(step++, 0, batch);  // starts the read-ahead
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the step computing
    state.ResumeTiming();
    benchmark::DoNotOptimize(batches.images_held(step, 0, batch).data());
    benchmark::DoNotOptimize(batches.labels(step, 0, batch).data());
    ++step;
  }
}
BENCHMARK(ServePrefetchedStep)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond)->Iterations(50);

}  // namespace
}  // namespace splitbrain::tools

BENCHMARK_MAIN();
