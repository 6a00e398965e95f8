// The recordings' index, on the host: a key finds the recording made for it and no other; a full
// index forgets the least recently used key, not the oldest one; a step's repeating argument
// sets, interleaved with calls whose arguments never recur, keep being found.

#include "exec/cuda/recorded_call_index.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace splitbrain::exec::cuda {
namespace {

TEST(RecordedCallIndex, FindsTheRecordingOfItsKeyOnly) {
  RecordedCallIndex<std::string> index(4);
  EXPECT_EQ(index.find({1, 2}), nullptr);
  index.insert({1, 2}, "a");
  index.insert({1, 3}, "b");
  index.insert({2}, "c");
  ASSERT_NE(index.find({1, 2}), nullptr);
  EXPECT_EQ(*index.find({1, 2}), "a");
  EXPECT_EQ(*index.find({1, 3}), "b");
  EXPECT_EQ(*index.find({2}), "c");
  EXPECT_EQ(index.find({1}), nullptr);        // a prefix is another key
  EXPECT_EQ(index.find({1, 2, 0}), nullptr);  // so is a longer one
  EXPECT_EQ(index.size(), 3U);
}

TEST(RecordedCallIndex, ForgetsTheLeastRecentlyUsedWhenFull) {
  RecordedCallIndex<int> index(2);
  index.insert({1}, 10);
  index.insert({2}, 20);
  ASSERT_NE(index.find({1}), nullptr);  // {2} is now the least recently used
  index.insert({3}, 30);
  EXPECT_EQ(index.size(), 2U);
  EXPECT_EQ(index.find({2}), nullptr);
  ASSERT_NE(index.find({1}), nullptr);
  EXPECT_EQ(*index.find({1}), 10);
  ASSERT_NE(index.find({3}), nullptr);
  EXPECT_EQ(*index.find({3}), 30);
}

TEST(RecordedCallIndex, KeepsARepeatingStepsKeysAmongOneOffs) {
  // Per step: a forward and a recompute with the same arguments, then a one-off (an evaluation
  // with fresh buffers, say). The step's key stays found; it is recorded once.
  RecordedCallIndex<int> index(3);
  int recordings = 0;
  for (std::uintptr_t step = 0; step < 20; ++step) {
    for (const CallKey& key : {CallKey{7, 8}, CallKey{7, 8}, CallKey{1000 + step}}) {
      if (index.find(key) == nullptr) {
        index.insert(key, 0);
        ++recordings;
      }
    }
  }
  EXPECT_EQ(recordings, 1 + 20);
  EXPECT_NE(index.find({7, 8}), nullptr);
  EXPECT_LE(index.size(), 3U);
}

TEST(RecordedCallIndex, RefusesNoRoom) { EXPECT_THROW(RecordedCallIndex<int>(0), std::invalid_argument); }

}  // namespace
}  // namespace splitbrain::exec::cuda
