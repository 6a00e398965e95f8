#include "sim/efficiency.h"

#include <array>
#include <utility>

namespace splitbrain::sim {
namespace {
constexpr std::array<std::pair<OpClass, std::string_view>, 3> kOpClassNames = {{
    {OpClass::gemm, "gemm"},
    {OpClass::conv, "conv"},
    {OpClass::elementwise, "elementwise"},
}};
}  // namespace

std::string_view op_class_name(OpClass op_class) {
  for (const auto& [c, name] : kOpClassNames) {
    if (c == op_class) return name;
  }
  return "unknown";
}

std::optional<OpClass> op_class_from_name(std::string_view name) {
  for (const auto& [c, n] : kOpClassNames) {
    if (n == name) return c;
  }
  return std::nullopt;
}

double EfficiencyCurve::efficiency(double size) const {
  if (!(size > 0.0)) return 0.0;  // also catches NaN
  // half_efficiency_size == 0 means "no overhead": the asymptote is reached at once.
  return max_efficiency * size / (size + half_efficiency_size);
}

}  // namespace splitbrain::sim
