// overlap_matching_cost: the overlap at which the priced cost of a step's reductions equals the
// measured one, for prices shaped as the simulator's are.

#include "tools/calibration/overlap_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace splitbrain::tools {
namespace {

TEST(OverlapFit, RecoversTheOverlapOfALinearPrice) {
  // (1 - overlap) x 40 ms of reductions beyond 5 ms that no overlap hides (the last bucket's).
  const auto price = [](double overlap) { return 5e-3 + (1.0 - overlap) * 40e-3; };
  for (const double overlap : {-1.0, -0.6, -0.25, 0.0, 0.3, 0.9, 1.0})
    EXPECT_NEAR(overlap_matching_cost(price, price(overlap), 0.0).value(), overlap, 1e-6) << overlap;
}

TEST(OverlapFit, ClampsAtItsEndsWithinTheMeasurementsSpreadAtFullOverlap) {
  const auto price = [](double overlap) { return (1.0 - overlap) * 10e-3; };
  EXPECT_EQ(overlap_matching_cost(price, 50e-3, 0.0), -1.0);  // more than twice the reductions
  EXPECT_EQ(overlap_matching_cost(price, -1e-3, 2e-3), 1.0);  // a little less than nothing: all hidden
  // A price that does not move with the overlap (no reduction overlapped): an end, never between.
  const auto flat = [](double) { return 7e-3; };
  EXPECT_EQ(overlap_matching_cost(flat, 8e-3, 1e-3), -1.0);
  EXPECT_EQ(overlap_matching_cost(flat, 6e-3, 1e-3), 1.0);
}

TEST(OverlapFit, AMissBeyondEveryOverlapIsAnotherPricesNotTheOverlaps) {
  // A step bound by its link (vgg11's buckets over 1 Gb/s between two emulated nodes): it waits
  // at its end for the reductions still running, priced 1,080 ms whatever the overlap, and they
  // cost it 953 ms, the pairs of steps spreading 30 ms. The link is priced 13% high, which no
  // overlap can say.
  const auto link_bound = [](double overlap) { return std::max(1.080, (1.0 - overlap) * 1.093); };
  EXPECT_FALSE(overlap_matching_cost(link_bound, 0.953, 0.030).has_value());
  const auto price = [](double overlap) { return (1.0 - overlap) * 10e-3; };
  EXPECT_FALSE(overlap_matching_cost(price, -5e-3, 2e-3).has_value());
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
    const double overlap = overlap_matching_cost(price, measured, 0.0).value();
    ASSERT_GE(overlap, -1.0);
    ASSERT_LE(overlap, 1.0);
    EXPECT_NEAR(price(overlap), measured, reductions * 1e-6) << "trial " << trial;
  }
}

}  // namespace
}  // namespace splitbrain::tools
