// overlap_matching_cost: the overlap at which the priced cost of a step's reductions equals the
// measured one, for prices shaped as the simulator's are.

#include "tools/splitbrain/overlap_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace splitbrain::tools {
namespace {

TEST(OverlapFit, RecoversTheOverlapOfALinearPrice) {
  // (1 - overlap) x 40 ms of reductions beyond 5 ms that no overlap hides (the last bucket's).
  const auto price = [](double overlap) { return 5e-3 + (1.0 - overlap) * 40e-3; };
  for (const double overlap : {-1.0, -0.6, -0.25, 0.0, 0.3, 0.9, 1.0})
    EXPECT_NEAR(overlap_matching_cost(price, price(overlap)), overlap, 1e-6) << overlap;
}

TEST(OverlapFit, ClampsAtTheEndsOfItsRange) {
  const auto price = [](double overlap) { return (1.0 - overlap) * 10e-3; };
  EXPECT_EQ(overlap_matching_cost(price, 50e-3), -1.0);  // costs more than twice the reductions
  EXPECT_EQ(overlap_matching_cost(price, -1e-3), 1.0);   // less than nothing: all hidden
  // A price that does not move with the overlap (no reduction overlapped): an end, never between.
  const auto flat = [](double) { return 7e-3; };
  EXPECT_EQ(overlap_matching_cost(flat, 8e-3), -1.0);
  EXPECT_EQ(overlap_matching_cost(flat, 6e-3), 1.0);
}

TEST(OverlapFit, MatchesAnyPriceShapedAsTheSimulatorsWithinItsRange) {
  // The host charged (1 - overlap) x the overlapped reductions, but never less than the wait at
  // the step's end for the ones still running: flat from some overlap on.
  std::mt19937 random(14);
  std::uniform_real_distribution<double> seconds(1e-3, 50e-3);
  for (int trial = 0; trial < 200; ++trial) {
    const double reductions = seconds(random);
    const double end_wait = seconds(random);
    const auto price = [&](double overlap) { return std::max(end_wait, (1.0 - overlap) * reductions); };
    const double measured = std::uniform_real_distribution<double>(price(1.0), price(-1.0))(random);
    const double overlap = overlap_matching_cost(price, measured);
    ASSERT_GE(overlap, -1.0);
    ASSERT_LE(overlap, 1.0);
    EXPECT_NEAR(price(overlap), measured, reductions * 1e-6) << "trial " << trial;
  }
}

}  // namespace
}  // namespace splitbrain::tools
