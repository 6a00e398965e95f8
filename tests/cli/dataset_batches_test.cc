// DatasetBatches serves each block of a step's samples from one read of the data set, and reading
// the next step ahead on a worker thread (BatchPrefetch::next_step) serves exactly what reading in
// the step serves: the sampler's samples, their images and labels, block by block.

#include "tools/training/dataset_batches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <vector>

#include "exec/data/epoch_sampler.h"
#include "exec/data/synthetic.h"

namespace splitbrain::tools {
namespace {

constexpr int64_t kGlobalBatch = 8;
constexpr uint64_t kSeed = 5;

exec::data::SyntheticOptions small_data() {
  exec::data::SyntheticOptions options;
  options.shape = {2, 5, 4};
  options.train_samples = 20;  // an epoch of 2 steps: the blocks below cross epochs
  return options;
}

DatasetBatches batches(BatchPrefetch prefetch) {
  return DatasetBatches(std::make_unique<exec::data::SyntheticDataset>(small_data(), exec::data::Split::kTrain),
                        kGlobalBatch, kSeed, prefetch);
}

TEST(DatasetBatches, EachBlockIsTheSamplersSamplesWithOrWithoutReadingAhead) {
  const exec::data::SyntheticDataset dataset(small_data(), exec::data::Split::kTrain);
  exec::data::EpochSampler sampler(dataset.sample_count(), kGlobalBatch, kSeed);
  const auto elements = static_cast<size_t>(dataset.sample_shape().elements());
  for (const BatchPrefetch prefetch : {BatchPrefetch::none, BatchPrefetch::next_step}) {
    DatasetBatches source = batches(prefetch);
    for (int64_t step = 0; step < 5; ++step) {
      const std::vector<int64_t> batch = sampler.batch_at_iteration(step);
      for (const int64_t first : {0, 3}) {  // two blocks of one step, as two micro-batches or ranks ask
        const int64_t count = first == 0 ? 3 : 5;
        const std::vector<int64_t> samples(batch.begin() + first, batch.begin() + first + count);
        std::vector<float> expected_images(samples.size() * elements);
        std::vector<int32_t> expected_labels(samples.size());
        dataset.read(samples, expected_images.data(), expected_labels.data());

        std::vector<float> images(expected_images.size());
        source.images(step, first, count, images.data());
        EXPECT_EQ(images, expected_images) << "step " << step << ", first " << first;
        const std::span<const float> held = source.images_held(step, first, count);
        EXPECT_EQ(std::vector<float>(held.begin(), held.end()), expected_images) << "held, step " << step;
        EXPECT_EQ(source.labels(step, first, count), expected_labels) << "step " << step << ", first " << first;
      }
    }
  }
}

// Records the blocks of memory it has handed out and not taken back.
class RecordingMemory final : public std::pmr::memory_resource {
 public:
  int64_t allocations() const { return allocations_; }
  // Whether [begin, begin + count) lies in one block handed out and not taken back.
  bool holds(const float* begin, size_t count) const {
    const auto* first = reinterpret_cast<const std::byte*>(begin);
    return std::any_of(live_.begin(), live_.end(), [&](const auto& block) {
      return first >= block.first && first + count * sizeof(float) <= block.first + block.second;
    });
  }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    void* memory = std::pmr::new_delete_resource()->allocate(bytes, alignment);
    live_.emplace(static_cast<std::byte*>(memory), bytes);
    ++allocations_;
    return memory;
  }
  void do_deallocate(void* memory, size_t bytes, size_t alignment) override {
    live_.erase(static_cast<std::byte*>(memory));
    std::pmr::new_delete_resource()->deallocate(memory, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  std::map<std::byte*, size_t> live_;
  int64_t allocations_ = 0;
};

// A GPU's uploads are fast only from its page-locked memory (exec::HostLink::upload_memory), so
// every image the runtime is handed must lie in the memory given, read on this thread or ahead on
// the worker, and later steps must reuse that memory rather than allocate more of it.
TEST(DatasetBatches, ImagesLieInTheMemoryGivenAndItIsReused) {
  for (const BatchPrefetch prefetch : {BatchPrefetch::none, BatchPrefetch::next_step}) {
    const auto memory = std::make_shared<RecordingMemory>();
    DatasetBatches source(std::make_unique<exec::data::SyntheticDataset>(small_data(), exec::data::Split::kTrain),
                          kGlobalBatch, kSeed, prefetch, memory);
    int64_t allocations_after_two_steps = 0;
    for (int64_t step = 0; step < 6; ++step) {
      const std::span<const float> held = source.images_held(step, 0, kGlobalBatch);
      ASSERT_FALSE(held.empty());
      EXPECT_TRUE(memory->holds(held.data(), held.size())) << "step " << step;
      if (step == 1) allocations_after_two_steps = memory->allocations();
    }
    EXPECT_GT(allocations_after_two_steps, 0);
    EXPECT_EQ(memory->allocations(), allocations_after_two_steps) << "later steps allocated images";
  }
}

}  // namespace
}  // namespace splitbrain::tools
