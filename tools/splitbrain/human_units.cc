#include "tools/splitbrain/human_units.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace splitbrain::tools {
namespace {

std::string with_prefix(double value, std::string_view unit) {
  constexpr std::array<std::string_view, 6> kPrefixes = {"", "K", "M", "G", "T", "P"};
  size_t p = 0;
  while (std::abs(value) >= 1000.0 && p + 1 < kPrefixes.size()) {
    value /= 1000.0;
    ++p;
  }
  if (p == 0) return fmt::format("{:g} {}", value, unit);
  return fmt::format("{:.2f} {}{}", value, kPrefixes[p], unit);
}

}  // namespace

std::string human_bytes(double bytes) { return with_prefix(bytes, "B"); }

std::string human_flops(double flops) { return with_prefix(flops, "FLOP"); }

std::string with_thousands_separators(int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -value : value);
  std::string grouped = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

}  // namespace splitbrain::tools
