#pragma once
// Least-squares fits for calibration: a line y = intercept + slope x (collective time against
// bytes: latency and inverse bandwidth), and the saturating efficiency curve of sim/efficiency.h
// from rates measured at several sizes (time is linear in size).

#include <span>

namespace splitbrain::tools {

struct Line {
  double intercept = 0.0;
  double slope = 0.0;
};
Line fit_line(std::span<const double> x, std::span<const double> y);
// Weighted least squares: minimises sum weights[i] * (y[i] - line(x[i]))^2.
Line fit_line(std::span<const double> x, std::span<const double> y, std::span<const double> weights);

struct SaturatingRate {
  double peak = 0.0;       // the rate work of infinite size would reach
  double half_size = 0.0;  // the size that reaches half of it
};
// rate(size) = peak * size / (size + half_size)  <=>  1/rate = 1/peak + (half_size/peak) / size.
SaturatingRate fit_saturating_rate(std::span<const double> sizes, std::span<const double> rates);

}  // namespace splitbrain::tools
