// HostStepClock: each mark reads the host clock since start(), in order, and a new start forgets
// the marks before (lower bounds only: a busy host may make a sleep last longer).

#include "exec/runtime/step_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace splitbrain::exec {
namespace {

TEST(HostStepClock, MarksAreSecondsSinceStartInOrder) {
  HostStepClock clock;
  clock.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  clock.mark();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  clock.mark();
  const std::vector<double> seconds = clock.seconds_since_start();
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_GE(seconds[0], 0.010);
  EXPECT_GE(seconds[1] - seconds[0], 0.005);

  clock.start();
  clock.mark();
  EXPECT_EQ(clock.seconds_since_start().size(), 1u);
}

}  // namespace
}  // namespace splitbrain::exec
