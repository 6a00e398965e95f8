#include "exec/runtime/shared_time_axis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace splitbrain::exec {
namespace {

TEST(SharedTimeAxis, RanksOfOneKernelCountFromTheEarliestStart) {
  // Two emulated nodes on one machine: four ranks, one boot id, the third started 2 ms late.
  const std::vector<double> offsets =
      shared_axis_offsets_seconds({"a", "a", "a", "a"}, {100.0005, 100.0, 100.002, 100.0001});
  ASSERT_EQ(offsets.size(), 4u);
  EXPECT_NEAR(offsets[0], 0.0005, 1e-9);
  EXPECT_DOUBLE_EQ(offsets[1], 0.0);
  EXPECT_NEAR(offsets[2], 0.002, 1e-9);
  EXPECT_NEAR(offsets[3], 0.0001, 1e-9);
}

TEST(SharedTimeAxis, EachKernelHasItsOwnAxisAndAnUnknownOneNone) {
  // Two machines whose monotonic clocks have nothing in common, and a rank that could not read
  // its boot id: each machine counts from its own earliest rank, the unknown rank from itself.
  const std::vector<double> offsets =
      shared_axis_offsets_seconds({"host-a", "host-b", "host-a", "host-b", ""}, {5.0, 9000.0, 5.25, 9000.5, 42.0});
  EXPECT_DOUBLE_EQ(offsets[0], 0.0);
  EXPECT_DOUBLE_EQ(offsets[1], 0.0);
  EXPECT_DOUBLE_EQ(offsets[2], 0.25);
  EXPECT_DOUBLE_EQ(offsets[3], 0.5);
  EXPECT_DOUBLE_EQ(offsets[4], 0.0);
}

TEST(SharedTimeAxis, RefusesMismatchedLists) {
  EXPECT_THROW(shared_axis_offsets_seconds({"a", "a"}, {1.0}), std::invalid_argument);
}

TEST(StepSpan, RanksThatTookTurnsOnOneCoreSpanBothTurns) {
  // Two ranks of one machine sharing a core, with nothing in the step to make them wait for each
  // other: the first runs its 2 ms step whole, the second leaves the barrier when it gets the core
  // and runs its own 2 ms. Each timed 2 ms; the step took 4.
  EXPECT_NEAR(step_span_seconds({"a", "a"}, {10.0, 10.002}, {0.002, 0.002}), 0.004, 1e-12);
}

TEST(StepSpan, RanksThatStartTogetherSpanTheSlowest) {
  EXPECT_DOUBLE_EQ(step_span_seconds({"a", "a", "a"}, {3.0, 3.0, 3.0}, {0.010, 0.012, 0.011}), 0.012);
}

TEST(StepSpan, ClocksOfOtherMachinesAreNeverCompared) {
  // Machine b's clock reads far behind a's: a span across the two would be meaningless. Each
  // machine spans its own ranks, and a rank with no known clock counts its own time.
  EXPECT_NEAR(step_span_seconds({"a", "b", "a", "b"}, {500.0, 7.0, 500.001, 7.0}, {0.002, 0.0025, 0.002, 0.001}), 0.003,
              1e-12);
  EXPECT_DOUBLE_EQ(step_span_seconds({"a", "", "a"}, {500.0, 0.0, 500.001}, {0.002, 0.005, 0.002}), 0.005);
}

TEST(StepSpan, NeverShorterThanAnyRanksOwnTime) {
  // Property: whatever the starts, the span covers every rank's own step.
  const std::vector<std::string> domains = {"a", "b", "a", "", "b", "a"};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> starts;
    std::vector<double> seconds;
    double longest = 0.0;
    for (size_t r = 0; r < domains.size(); ++r) {
      starts.push_back(static_cast<double>((trial * 7919 + static_cast<int>(r) * 104729) % 1000) * 1e-4);
      seconds.push_back(static_cast<double>((trial * 31 + static_cast<int>(r) * 17) % 50 + 1) * 1e-4);
      longest = std::max(longest, seconds.back());
    }
    EXPECT_GE(step_span_seconds(domains, starts, seconds), longest);
  }
}

TEST(StepSpan, RefusesMismatchedLists) {
  EXPECT_THROW(step_span_seconds({"a", "a"}, {1.0, 1.0}, {1.0}), std::invalid_argument);
}

TEST(SharedTimeAxis, ThisKernelHasABootId) {
  // Linux always has one; the executor's ranks on one machine compare it.
  EXPECT_FALSE(steady_clock_domain().empty());
}

}  // namespace
}  // namespace splitbrain::exec
