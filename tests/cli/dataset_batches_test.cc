// DatasetBatches serves each block of a step's samples from one read of the data set, and reading
// the next step ahead on a worker thread (BatchPrefetch::next_step) serves exactly what reading in
// the step serves: the sampler's samples, their images and labels, block by block.

#include "tools/splitbrain/dataset_batches.h"

#include <gtest/gtest.h>

#include <memory>
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

}  // namespace
}  // namespace splitbrain::tools
