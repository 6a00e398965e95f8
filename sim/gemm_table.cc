#include "sim/gemm_table.h"

#include <algorithm>
#include <cmath>

namespace splitbrain::sim {
namespace {

// Where `value` falls on one axis: the lower neighbour's index and the weight of the upper one
// in log space; weight 0 at or below the first point, and at or above the last (clamped).
struct AxisPosition {
  size_t lower = 0;
  double upper_weight = 0.0;
};

AxisPosition locate(const std::vector<int64_t>& axis, double value) {
  if (axis.size() == 1 || !(value > static_cast<double>(axis.front()))) return {0, 0.0};
  if (value >= static_cast<double>(axis.back())) return {axis.size() - 1, 0.0};
  const auto upper = std::upper_bound(axis.begin(), axis.end(), value,
                                      [](double v, int64_t point) { return v < static_cast<double>(point); });
  const auto lower_index = static_cast<size_t>(upper - axis.begin()) - 1;
  const double low = std::log(static_cast<double>(axis[lower_index]));
  const double high = std::log(static_cast<double>(axis[lower_index + 1]));
  return {lower_index, (std::log(value) - low) / (high - low)};
}

}  // namespace

std::string_view gemm_pass_key(KernelPass pass) {
  switch (pass) {
    case KernelPass::forward:
      return "forward";
    case KernelPass::backward:
      return "backward_input";
    case KernelPass::weight_gradient:
      return "weight_gradient";
  }
  return "forward";
}

double gemm_table_efficiency(const GemmEfficiencyTable& table, KernelPass pass, const GemmShape& shape) {
  const std::vector<double>& values = table.of(pass);
  const AxisPosition m = locate(table.m, shape.m);
  const AxisPosition n = locate(table.n, shape.n);
  const AxisPosition k = locate(table.k, shape.k);
  double result = 0.0;
  // The eight corners of the cell, each weighted by its share; a corner of zero weight may lie
  // past the grid's end and is skipped.
  for (int corner = 0; corner < 8; ++corner) {
    const bool up_m = (corner & 4) != 0, up_n = (corner & 2) != 0, up_k = (corner & 1) != 0;
    const double weight = (up_m ? m.upper_weight : 1.0 - m.upper_weight) *
                          (up_n ? n.upper_weight : 1.0 - n.upper_weight) *
                          (up_k ? k.upper_weight : 1.0 - k.upper_weight);
    if (weight == 0.0) continue;
    result +=
        weight * values[table.index(m.lower + (up_m ? 1 : 0), n.lower + (up_n ? 1 : 0), k.lower + (up_k ? 1 : 0))];
  }
  return result;
}

}  // namespace splitbrain::sim
