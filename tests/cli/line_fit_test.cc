// The fits of `splitbrain calibrate`: a saturating rate curve is recovered from exact samples,
// and relative weighting keeps small kernels as well fitted as large ones.

#include "tools/calibration/line_fit.h"

#include <gtest/gtest.h>

#include <vector>

namespace splitbrain::tools {
namespace {

TEST(LineFit, WeightedLineThroughExactPointsIsExact) {
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> y = {3, 5, 7, 9};
  const std::vector<double> w = {1, 10, 0.1, 5};
  const Line line = fit_line(x, y, w);
  EXPECT_NEAR(line.slope, 2.0, 1e-12);
  EXPECT_NEAR(line.intercept, 1.0, 1e-12);
}

TEST(LineFit, SaturatingRateRecoversPeakAndHalfSize) {
  // rate = 100e9 * size / (size + 2e6): a kernel with a fixed 20 us overhead at 100 GFLOP/s.
  std::vector<double> sizes = {1e5, 1e6, 1e7, 1e8, 1e9};
  std::vector<double> rates;
  for (double s : sizes) rates.push_back(100e9 * s / (s + 2e6));
  const SaturatingRate fit = fit_saturating_rate(sizes, rates);
  EXPECT_NEAR(fit.peak, 100e9, 1e-3 * 100e9);
  EXPECT_NEAR(fit.half_size, 2e6, 1e-3 * 2e6);
}

TEST(LineFit, LargeKernelsWeighMore) {
  // A step's time is mostly its large kernels: one large sample 10% slow moves the fit's rate
  // there by most of that, while the smallest kernel's rate stays within a quarter.
  std::vector<double> sizes = {1e5, 1e6, 1e7, 1e9};
  std::vector<double> rates;
  for (double s : sizes) rates.push_back(100e9 * s / (s + 2e6));
  rates.back() *= 0.9;
  const SaturatingRate fit = fit_saturating_rate(sizes, rates);
  const auto rate_at = [&](double size) { return fit.peak * size / (size + fit.half_size); };
  EXPECT_NEAR(rate_at(1e9) / rates.back(), 1.0, 0.03);
  EXPECT_NEAR(rate_at(1e5) / rates.front(), 1.0, 0.25);
}

TEST(LineFit, FasterWhenSmallGivesAFlatRateBetweenTheSamples) {
  // Faster at small sizes (caches) cannot be a saturating curve: the fit is a flat rate (no half
  // size) inside the range of the samples, nearer the large ones' rate.
  const std::vector<double> sizes = {1e5, 1e6, 1e7};
  const std::vector<double> rates = {30e9, 20e9, 10e9};
  const SaturatingRate fit = fit_saturating_rate(sizes, rates);
  EXPECT_DOUBLE_EQ(fit.half_size, 0.0);
  EXPECT_GT(fit.peak, 10e9);
  EXPECT_LT(fit.peak, 15e9);
}

}  // namespace
}  // namespace splitbrain::tools
