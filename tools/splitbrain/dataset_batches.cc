#include "tools/splitbrain/dataset_batches.h"

#include <algorithm>
#include <span>

namespace splitbrain::tools {
namespace {

// Reads the samples into a new block. Dataset::read is const and touches no shared state, so
// this runs on a worker thread as well.
auto reader(const exec::data::Dataset& dataset, std::vector<int64_t> indices) {
  return [&dataset, indices = std::move(indices)] {
    SampleBlock block{std::vector<float>(indices.size() * static_cast<size_t>(dataset.sample_shape().elements())),
                      std::vector<int32_t>(indices.size())};
    dataset.read(indices, block.images.data(), block.labels.data());
    return block;
  };
}

}  // namespace

DatasetBatches::DatasetBatches(std::unique_ptr<exec::data::Dataset> dataset, int64_t global_batch, uint64_t seed,
                               BatchPrefetch prefetch)
    : dataset_(std::move(dataset)), sampler_(dataset_->sample_count(), global_batch, seed), prefetch_(prefetch) {}

// A worker still reading holds a reference to the data set: wait for it before the data set goes.
DatasetBatches::~DatasetBatches() {
  for (auto& [key, pending] : being_read_) pending.wait();
}

std::vector<int64_t> DatasetBatches::sample_indices(const BlockKey& key) {
  const auto& [step, first, count] = key;
  if (step != cached_step_) {
    batch_ = sampler_.batch_at_iteration(step);
    cached_step_ = step;
  }
  const auto samples = std::span<const int64_t>(batch_).subspan(static_cast<size_t>(first), static_cast<size_t>(count));
  return {samples.begin(), samples.end()};
}

const SampleBlock& DatasetBatches::block(const BlockKey& key) {
  const auto found = read_.find(key);
  if (found != read_.end()) return found->second;
  const int64_t step = std::get<0>(key);
  // Blocks of earlier steps are not asked for again.
  std::erase_if(read_, [&](const auto& entry) { return std::get<0>(entry.first) < step; });
  SampleBlock block;
  const auto pending = being_read_.find(key);
  if (pending != being_read_.end()) {
    block = pending->second.get();
    being_read_.erase(pending);
  } else {
    block = reader(*dataset_, sample_indices(key))();
  }
  if (prefetch_ == BatchPrefetch::next_step) {
    const BlockKey next{step + 1, std::get<1>(key), std::get<2>(key)};
    if (being_read_.count(next) == 0)
      being_read_.emplace(next, std::async(std::launch::async, reader(*dataset_, sample_indices(next))));
  }
  return read_.emplace(key, std::move(block)).first->second;
}

void DatasetBatches::images(int64_t step, int64_t first, int64_t count, float* out) {
  const SampleBlock& b = block({step, first, count});
  std::copy(b.images.begin(), b.images.end(), out);
}

std::span<const float> DatasetBatches::images_held(int64_t step, int64_t first, int64_t count) {
  return block({step, first, count}).images;
}

std::vector<int32_t> DatasetBatches::labels(int64_t step, int64_t first, int64_t count) {
  return block({step, first, count}).labels;
}

}  // namespace splitbrain::tools
