#include "tools/training/dataset_batches.h"

#include <algorithm>
#include <span>
#include <utility>

namespace splitbrain::tools {

DatasetBatches::DatasetBatches(std::unique_ptr<exec::data::Dataset> dataset, int64_t global_batch, uint64_t seed,
                               BatchPrefetch prefetch, std::shared_ptr<std::pmr::memory_resource> image_memory)
    : dataset_(std::move(dataset)),
      image_memory_(image_memory != nullptr ? std::move(image_memory)
                                            : std::shared_ptr<std::pmr::memory_resource>(
                                                  std::shared_ptr<void>(), std::pmr::get_default_resource())),
      sampler_(dataset_->sample_count(), global_batch, seed),
      reader_(prefetch == BatchPrefetch::next_step ? std::make_unique<BlockReader>(*dataset_) : nullptr) {}

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
  // Blocks of earlier steps are not asked for again: their memory serves the next reads.
  for (auto it = read_.begin(); it != read_.end();) {
    if (std::get<0>(it->first) >= step) {
      ++it;
      continue;
    }
    spare_.push_back(std::move(it->second));
    it = read_.erase(it);
  }
  SampleBlock block = reader_ != nullptr && reader_->has(key) ? reader_->take(key) : read_now(key);
  if (reader_ != nullptr) {
    const BlockKey next{step + 1, std::get<1>(key), std::get<2>(key)};
    if (!reader_->has(next)) reader_->start(next, sample_indices(next), spare_block());
  }
  return read_.emplace(key, std::move(block)).first->second;
}

SampleBlock DatasetBatches::spare_block() {
  if (spare_.empty()) return SampleBlock(image_memory_.get());
  SampleBlock block = std::move(spare_.back());
  spare_.pop_back();
  return block;
}

SampleBlock DatasetBatches::read_now(const BlockKey& key) {
  SampleBlock block = spare_block();
  read_block(*dataset_, sample_indices(key), block);
  return block;
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
