// Token sequences: a pure function of (seed, step, sample, position), so any rank's shard equals
// that part of the whole batch; ids in the vocabulary; the labels are the next tokens; bad
// options are refused.

#include "exec/data/token_sequences.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

TEST(TokenSequences, AShardEqualsItsPartOfTheWholeBatch) {
  const TokenSequences tokens({50, 6, 3});
  std::vector<float> whole(8 * 6);
  tokens.inputs(2, 0, 8, whole.data());
  std::vector<float> shard(3 * 6);
  tokens.inputs(2, 4, 3, shard.data());
  EXPECT_EQ(shard, std::vector<float>(whole.begin() + 4 * 6, whole.begin() + 7 * 6));
  const auto all_labels = tokens.labels(2, 0, 8);
  const auto shard_labels = tokens.labels(2, 4, 3);
  EXPECT_EQ(shard_labels, std::vector<int32_t>(all_labels.begin() + 4 * 6, all_labels.begin() + 7 * 6));
}

TEST(TokenSequences, LabelsAreTheNextTokensAndIdsLieInTheVocabulary) {
  const TokenSequences tokens({17, 5, 9});
  std::vector<float> inputs(4 * 5);
  tokens.inputs(0, 0, 4, inputs.data());
  const auto labels = tokens.labels(0, 0, 4);
  ASSERT_EQ(labels.size(), inputs.size());
  for (size_t sample = 0; sample < 4; ++sample) {
    for (size_t t = 0; t + 1 < 5; ++t)
      EXPECT_EQ(static_cast<float>(labels[sample * 5 + t]), inputs[sample * 5 + t + 1]);
    EXPECT_EQ(labels[sample * 5 + 4], tokens.token(0, static_cast<int64_t>(sample), 5));
  }
  for (float id : inputs) {
    EXPECT_GE(id, 0.0f);
    EXPECT_LT(id, 17.0f);
  }
}

TEST(TokenSequences, SeedsAndStepsGiveOtherSequences) {
  const TokenSequences a({1000, 4, 1});
  const TokenSequences b({1000, 4, 2});
  std::set<int64_t> starts;
  for (int64_t step = 0; step < 3; ++step) {
    for (int64_t sample = 0; sample < 4; ++sample) starts.insert(a.token(step, sample, 0));
  }
  EXPECT_GT(starts.size(), 8u) << "step and sample must both change the sequence";
  int differ = 0;
  for (int64_t sample = 0; sample < 8; ++sample) differ += a.token(0, sample, 0) != b.token(0, sample, 0) ? 1 : 0;
  EXPECT_GT(differ, 4);
}

TEST(TokenSequences, BadOptionsAreInputErrors) {
  EXPECT_THROW(TokenSequences({1, 4, 0}), InputError);
  EXPECT_THROW(TokenSequences({(int64_t{1} << 24) + 1, 4, 0}), InputError);
  EXPECT_THROW(TokenSequences({10, 0, 0}), InputError);
}

}  // namespace
}  // namespace splitbrain::exec::data
