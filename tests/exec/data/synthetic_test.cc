// Synthetic data: a pure function of (seed, split, sample), labels in range, and learnable: a
// nearest-class-mean classifier fitted on training samples labels held-out test samples well.

#include "exec/data/synthetic.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <numeric>

#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

struct Batch {
  std::vector<float> images;
  std::vector<int32_t> labels;
};

Batch read_first(const Dataset& dataset, int64_t count) {
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  Batch batch{std::vector<float>(static_cast<size_t>(count * dataset.sample_shape().elements())),
              std::vector<int32_t>(static_cast<size_t>(count))};
  dataset.read(indices, batch.images.data(), batch.labels.data());
  return batch;
}

TEST(Synthetic, DeterministicForASeedAndIndependentOfTheBatch) {
  const SyntheticOptions options{5, {3, 8, 8}, 100, 20, 11};
  const SyntheticDataset a(options, Split::kTrain);
  const SyntheticDataset b(options, Split::kTrain);
  const Batch first = read_first(a, 10);
  const Batch again = read_first(b, 10);
  EXPECT_EQ(first.images, again.images);
  EXPECT_EQ(first.labels, again.labels);
  // Sample 7 alone equals sample 7 inside a batch: ranks reading different shards agree.
  const std::array<int64_t, 1> seven = {7};
  std::vector<float> alone(3 * 8 * 8);
  int32_t label = -1;
  a.read(seven, alone.data(), &label);
  EXPECT_EQ(label, first.labels[7]);
  EXPECT_TRUE(std::equal(alone.begin(), alone.end(), first.images.begin() + 7 * 192));
  // Another seed, another data set; the test split is not the training split.
  EXPECT_NE(read_first(SyntheticDataset({5, {3, 8, 8}, 100, 20, 12}, Split::kTrain), 10).images, first.images);
  EXPECT_NE(read_first(SyntheticDataset(options, Split::kTest), 10).images, first.images);
}

TEST(Synthetic, LabelsInRangeAndEveryClassPresent) {
  const SyntheticDataset dataset({7, {1, 4, 4}, 700, 10, 3}, Split::kTrain);
  EXPECT_EQ(dataset.sample_count(), 700);
  EXPECT_EQ(dataset.class_count(), 7);
  const Batch batch = read_first(dataset, 700);
  std::array<int, 7> histogram{};
  for (const int32_t label : batch.labels) {
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 7);
    ++histogram[static_cast<size_t>(label)];
  }
  for (const int count : histogram) EXPECT_GT(count, 50);  // ~100 each
}

TEST(Synthetic, NearestClassMeanSeparatesHeldOutSamples) {
  const SyntheticOptions options{10, {1, 28, 28}, 1000, 200, 5};
  const SyntheticDataset train(options, Split::kTrain);
  const SyntheticDataset test(options, Split::kTest);
  const int64_t elements = 784;
  const Batch fit = read_first(train, 1000);
  std::vector<double> means(10 * elements, 0.0);
  std::array<int, 10> counts{};
  for (size_t i = 0; i < fit.labels.size(); ++i) {
    const auto y = static_cast<size_t>(fit.labels[i]);
    ++counts[y];
    for (int64_t e = 0; e < elements; ++e) means[y * elements + e] += fit.images[i * elements + e];
  }
  for (size_t y = 0; y < 10; ++y) {
    for (int64_t e = 0; e < elements; ++e) means[y * elements + e] /= std::max(counts[y], 1);
  }
  const Batch held_out = read_first(test, 200);
  int correct = 0;
  for (size_t i = 0; i < held_out.labels.size(); ++i) {
    double best = std::numeric_limits<double>::max();
    size_t best_class = 0;
    for (size_t y = 0; y < 10; ++y) {
      double distance = 0;
      for (int64_t e = 0; e < elements; ++e) {
        const double d = held_out.images[i * elements + e] - means[y * elements + e];
        distance += d * d;
      }
      if (distance < best) best = distance, best_class = y;
    }
    correct += static_cast<int32_t>(best_class) == held_out.labels[i];
  }
  EXPECT_GE(correct, 190) << "synthetic classes should be easy to tell apart";
}

TEST(Synthetic, BadOptionsAreInputErrors) {
  EXPECT_THROW(SyntheticDataset({1, {1, 2, 2}, 10, 10, 0}, Split::kTrain), InputError);
  EXPECT_THROW(SyntheticDataset({2, {0, 2, 2}, 10, 10, 0}, Split::kTrain), InputError);
  EXPECT_THROW(SyntheticDataset({2, {1, 2, 2}, 10, 0, 0}, Split::kTest), InputError);
}

}  // namespace
}  // namespace splitbrain::exec::data
