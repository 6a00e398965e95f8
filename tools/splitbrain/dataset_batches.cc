#include "tools/splitbrain/dataset_batches.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace splitbrain::tools {

DatasetBatches::DatasetBatches(std::unique_ptr<exec::data::Dataset> dataset, int64_t global_batch, uint64_t seed)
    : dataset_(std::move(dataset)), sampler_(dataset_->sample_count(), global_batch, seed) {}

std::span<const int64_t> DatasetBatches::samples(int64_t step, int64_t first, int64_t count) {
  if (step != cached_step_) {
    batch_ = sampler_.batch_at_iteration(step);
    cached_step_ = step;
  }
  return std::span<const int64_t>(batch_).subspan(static_cast<size_t>(first), static_cast<size_t>(count));
}

void DatasetBatches::images(int64_t step, int64_t first, int64_t count, float* out) {
  std::vector<int32_t> ignored(static_cast<size_t>(count));
  dataset_->read(samples(step, first, count), out, ignored.data());
}

std::vector<int32_t> DatasetBatches::labels(int64_t step, int64_t first, int64_t count) {
  std::vector<int32_t> labels(static_cast<size_t>(count));
  scratch_images_.resize(static_cast<size_t>(count * dataset_->sample_shape().elements()));
  dataset_->read(samples(step, first, count), scratch_images_.data(), labels.data());
  return labels;
}

}  // namespace splitbrain::tools
