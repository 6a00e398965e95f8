#include "tools/splitbrain/line_fit.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace splitbrain::tools {

Line fit_line(std::span<const double> x, std::span<const double> y) {
  const std::vector<double> equal(x.size(), 1.0);
  return fit_line(x, y, equal);
}

Line fit_line(std::span<const double> x, std::span<const double> y, std::span<const double> weights) {
  if (x.size() != y.size() || x.size() != weights.size() || x.size() < 2) {
    throw std::invalid_argument("fit_line: needs two or more points, each with a weight");
  }
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sw += weights[i];
    sx += weights[i] * x[i];
    sy += weights[i] * y[i];
    sxx += weights[i] * x[i] * x[i];
    sxy += weights[i] * x[i] * y[i];
  }
  const double denominator = sw * sxx - sx * sx;
  if (denominator == 0) throw std::invalid_argument("fit_line: all x are equal");
  Line line;
  line.slope = (sw * sxy - sx * sy) / denominator;
  line.intercept = (sy - line.slope * sx) / sw;
  return line;
}

SaturatingRate fit_saturating_rate(std::span<const double> sizes, std::span<const double> rates) {
  // time = size / peak + half_size / peak: a line in (size, time). Weighting each point by
  // 1/time^2 minimises the relative error of the predicted times, so the small kernels count
  // as much as the large ones that would otherwise dominate the sum of squares.
  std::vector<double> seconds;
  std::vector<double> weights;
  for (size_t i = 0; i < sizes.size(); ++i) {
    seconds.push_back(sizes[i] / rates[i]);
    weights.push_back(1.0 / (seconds.back() * seconds.back()));
  }
  const Line line = fit_line(sizes, seconds, weights);
  SaturatingRate fit;
  // A noisy fit can give a non-positive slope (no size dependence left); fall back to the best
  // rate seen, reached at every size.
  if (line.slope <= 0) {
    fit.peak = *std::max_element(rates.begin(), rates.end());
    return fit;
  }
  fit.peak = 1.0 / line.slope;
  fit.half_size = std::max(0.0, line.intercept * fit.peak);
  return fit;
}

}  // namespace splitbrain::tools
