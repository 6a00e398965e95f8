#include "tools/calibration/line_fit.h"

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
  // time = size / peak + half_size / peak: a line in (size, time). Each point's relative error
  // is weighted by its time (weights 1/time on squared residuals of time): a step's time is
  // mostly its large kernels, and the small ones still count.
  std::vector<double> seconds;
  std::vector<double> weights;
  for (size_t i = 0; i < sizes.size(); ++i) {
    seconds.push_back(sizes[i] / rates[i]);
    weights.push_back(1.0 / seconds.back());
  }
  const Line line = fit_line(sizes, seconds, weights);
  SaturatingRate fit;
  if (line.slope > 0 && line.intercept >= 0) {
    fit.peak = 1.0 / line.slope;
    fit.half_size = line.intercept * fit.peak;
    return fit;
  }
  // No fixed overhead to see (small kernels as fast or faster, from caches): one flat rate,
  // the weighted least-squares line through the origin.
  double numerator = 0.0;
  double denominator = 0.0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    numerator += weights[i] * sizes[i] * seconds[i];
    denominator += weights[i] * sizes[i] * sizes[i];
  }
  fit.peak = denominator / numerator;
  return fit;
}

}  // namespace splitbrain::tools
