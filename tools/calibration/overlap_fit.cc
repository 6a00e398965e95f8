#include "tools/calibration/overlap_fit.h"

namespace splitbrain::tools {

std::optional<double> overlap_matching_cost(const std::function<double(double)>& priced_cost_seconds,
                                            double measured_cost_seconds, double spread_seconds) {
  double low = -1.0;  // priced at least the measured cost here, once the ends are checked
  double high = 1.0;  // priced at most the measured cost here
  if (priced_cost_seconds(low) <= measured_cost_seconds) return low;
  if (const double least = priced_cost_seconds(high); least >= measured_cost_seconds) {
    if (least - measured_cost_seconds > spread_seconds) return std::nullopt;
    return high;
  }
  // The price is piecewise linear in the overlap (the reductions still running at the step's end
  // hold it at their time), so bisection rather than a line through the ends.
  while (high - low > 1e-7) {
    const double middle = 0.5 * (low + high);
    (priced_cost_seconds(middle) > measured_cost_seconds ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

}  // namespace splitbrain::tools
