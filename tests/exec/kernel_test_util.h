#pragma once
// Helpers for the kernel tests: seeded random tensors and an elementwise comparison of a float
// result with a float64 reference, relative to the reference's own scale (a sum of many fp32
// products carries an absolute error proportional to the terms, not to the sum, which may be ~0).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace splitbrain::exec::cpu::testing {

inline std::vector<float> random_floats(std::size_t count, uint32_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Every |actual - expected| <= rtol * max(|expected|, rms(expected), 1e-3). Names the first bad
// element; `what` says which tensor.
inline void expect_close(const std::vector<float>& actual, const std::vector<double>& expected, double rtol,
                         const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double sq = 0.0;
  for (double e : expected) sq += e * e;
  const double rms = expected.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(expected.size()));
  const double floor = std::max(rms, 1e-3);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double tol = rtol * std::max(std::abs(expected[i]), floor);
    if (!(std::abs(actual[i] - expected[i]) <= tol)) {
      if (bad == 0)
        ADD_FAILURE() << what << "[" << i << "]: got " << actual[i] << ", want " << expected[i] << " (tol " << tol
                      << ")";
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": elements outside tolerance";
}

}  // namespace splitbrain::exec::cpu::testing
