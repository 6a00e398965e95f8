#include "tools/splitbrain/line_fit.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace splitbrain::tools {

Line fit_line(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("fit_line: needs two or more points");
  const auto n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double denominator = n * sxx - sx * sx;
  if (denominator == 0) throw std::invalid_argument("fit_line: all x are equal");
  Line line;
  line.slope = (n * sxy - sx * sy) / denominator;
  line.intercept = (sy - line.slope * sx) / n;
  return line;
}

SaturatingRate fit_saturating_rate(std::span<const double> sizes, std::span<const double> rates) {
  std::vector<double> inverse_size;
  std::vector<double> inverse_rate;
  for (size_t i = 0; i < sizes.size(); ++i) {
    inverse_size.push_back(1.0 / sizes[i]);
    inverse_rate.push_back(1.0 / rates[i]);
  }
  const Line line = fit_line(inverse_size, inverse_rate);
  SaturatingRate fit;
  // A noisy fit can give a negative intercept or slope; fall back to the best rate seen.
  fit.peak = line.intercept > 0 ? 1.0 / line.intercept : *std::max_element(rates.begin(), rates.end());
  fit.half_size = std::max(0.0, line.slope * fit.peak);
  return fit;
}

}  // namespace splitbrain::tools
