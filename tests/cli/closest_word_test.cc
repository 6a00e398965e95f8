// The "did you mean" of unknown commands: edit distance with swaps, and only close words.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/splitbrain/closest_word.h"

namespace splitbrain::tools {
namespace {

TEST(ClosestWord, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("run", "run"), 0);
  EXPECT_EQ(edit_distance("rn", "run"), 1);
  EXPECT_EQ(edit_distance("runn", "run"), 1);
  EXPECT_EQ(edit_distance("ran", "run"), 1);
  EXPECT_EQ(edit_distance("trian", "train"), 1);  // a swap of neighbours is one edit
  EXPECT_EQ(edit_distance("", "plan"), 4);
}

TEST(ClosestWord, SuggestsOnlyALikelyTypo) {
  const std::vector<std::string> commands = {"models",  "inspect", "plan",    "simulate",
                                             "program", "run",     "compare", "calibrate"};
  EXPECT_EQ(closest_word("simulte", commands), "simulate");
  EXPECT_EQ(closest_word("calibarte", commands), "calibrate");
  EXPECT_EQ(closest_word("pan", commands), "plan");
  EXPECT_EQ(closest_word("deploy", commands), std::nullopt);
}

}  // namespace
}  // namespace splitbrain::tools
