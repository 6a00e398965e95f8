// EpochSampler: a seeded permutation per epoch, identical for the same (seed, epoch, step), cut
// into full batches; rank shards of a batch concatenate back to it.

#include "exec/data/epoch_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

TEST(EpochSampler, SameSeedEpochStepGivesSameIndices) {
  EpochSampler a(1000, 64, 42);
  EpochSampler b(1000, 64, 42);
  EXPECT_EQ(a.batch(3, 5), b.batch(3, 5));
  // Asking in another order (the cache holds another epoch meanwhile) changes nothing.
  const std::vector<int64_t> first = a.batch(0, 1);
  a.batch(7, 2);
  EXPECT_EQ(a.batch(0, 1), first);
  EXPECT_EQ(a.batch_at_iteration(15 * 2 + 3), b.batch(2, 3));  // 1000 / 64 = 15 steps per epoch
}

TEST(EpochSampler, OrdersDifferAcrossEpochsAndSeeds) {
  EpochSampler sampler(1000, 64, 42);
  EXPECT_NE(sampler.epoch_order(0), sampler.epoch_order(1));
  EXPECT_NE(sampler.epoch_order(0), EpochSampler(1000, 64, 43).epoch_order(0));
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), int64_t{0});
  EXPECT_NE(sampler.epoch_order(0), identity);
}

TEST(EpochSampler, AnEpochIsAPermutationAndBatchesDropTheRemainder) {
  EpochSampler sampler(1000, 64, 7);
  ASSERT_EQ(sampler.steps_per_epoch(), 15);  // 15 * 64 = 960; the last 40 of this epoch's order are dropped
  std::vector<int64_t> seen;
  for (int64_t step = 0; step < sampler.steps_per_epoch(); ++step) {
    const std::vector<int64_t> batch = sampler.batch(4, step);
    ASSERT_EQ(batch.size(), 64u);
    seen.insert(seen.end(), batch.begin(), batch.end());
  }
  const std::vector<int64_t> order = sampler.epoch_order(4);
  EXPECT_TRUE(std::equal(seen.begin(), seen.end(), order.begin()));
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_THROW(sampler.batch(4, 15), std::out_of_range);
  EXPECT_THROW(sampler.batch(-1, 0), std::out_of_range);
}

TEST(EpochSampler, ShardsOfTwoRanksConcatenateToTheBatch) {
  EpochSampler sampler(500, 10, 1);
  const std::vector<int64_t> batch = sampler.batch(2, 3);
  const auto rank0 = shard_of_batch(batch, 0, 4);  // an uneven split, as a layout may give
  const auto rank1 = shard_of_batch(batch, 4, 10);
  std::vector<int64_t> joined(rank0.begin(), rank0.end());
  joined.insert(joined.end(), rank1.begin(), rank1.end());
  EXPECT_EQ(joined, batch);
  EXPECT_TRUE(shard_of_batch(batch, 5, 5).empty());
  EXPECT_THROW(shard_of_batch(batch, 4, 11), std::out_of_range);
  EXPECT_THROW(shard_of_batch(batch, 6, 5), std::out_of_range);
}

TEST(EpochSampler, BatchLargerThanTheDataSetIsAnInputError) {
  EXPECT_THROW(EpochSampler(100, 101, 0), InputError);
  EXPECT_THROW(EpochSampler(100, 0, 0), InputError);
  EXPECT_EQ(EpochSampler(100, 100, 0).steps_per_epoch(), 1);
}

}  // namespace
}  // namespace splitbrain::exec::data
