#include "exec/runtime/shared_time_axis.h"

#include <gtest/gtest.h>

#include <stdexcept>

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

TEST(SharedTimeAxis, ThisKernelHasABootId) {
  // Linux always has one; the executor's ranks on one machine compare it.
  EXPECT_FALSE(steady_clock_domain().empty());
}

}  // namespace
}  // namespace splitbrain::exec
