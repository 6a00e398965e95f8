#pragma once
// Feeds the runtime from a data set: step i's global batch is the sampler's i-th batch (a seeded
// shuffle per epoch, the same on every rank), and each rank reads only the samples it holds.

#include <memory>

#include "exec/data/dataset.h"
#include "exec/data/epoch_sampler.h"
#include "exec/runtime/batch_source.h"

namespace splitbrain::tools {

class DatasetBatches final : public exec::BatchSource {
 public:
  DatasetBatches(std::unique_ptr<exec::data::Dataset> dataset, int64_t global_batch, uint64_t seed);
  void images(int64_t step, int64_t first, int64_t count, float* out) override;
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override;
  const exec::data::Dataset& dataset() const { return *dataset_; }

 private:
  std::span<const int64_t> samples(int64_t step, int64_t first, int64_t count);
  std::unique_ptr<exec::data::Dataset> dataset_;
  exec::data::EpochSampler sampler_;
  int64_t cached_step_ = -1;
  std::vector<int64_t> batch_;
  std::vector<float> scratch_images_;
};

}  // namespace splitbrain::tools
