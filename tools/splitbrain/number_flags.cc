#include "tools/splitbrain/number_flags.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

namespace splitbrain::tools {
namespace {

std::string integer_range_text(int64_t low, int64_t high) {
  if (low == 1) return fmt::format("must be a positive integer (at most {})", high);
  if (low == 0) return fmt::format("must be a non-negative integer (at most {})", high);
  return fmt::format("must be an integer from {} to {}", low, high);
}

// How --help names the values: a range where its top is one a user could reach.
std::string help_text(int64_t low, int64_t high) {
  if (high >= std::numeric_limits<int32_t>::max() && (low == 0 || low == 1))
    return low == 1 ? "POSITIVE" : "NON-NEGATIVE";
  return fmt::format("{} to {}", low, high);
}

// A finite number that is the whole text, or an error saying what it must be.
std::string finite_number_error(const std::string& text, double lowest, bool lowest_allowed, double& value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  const std::string wanted =
      lowest_allowed ? "must be a finite number of at least 0" : "must be a finite number above 0";
  if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    return fmt::format("{} (got '{}')", wanted, text);
  }
  if (value < lowest || (!lowest_allowed && value == lowest)) return fmt::format("{} (got {})", wanted, text);
  return {};
}

CLI::Validator finite_from(double lowest, bool lowest_allowed) {
  return CLI::Validator(
      [lowest, lowest_allowed](std::string& text) {
        double value = 0.0;
        return finite_number_error(text, lowest, lowest_allowed, value);
      },
      lowest_allowed ? "NON-NEGATIVE" : "POSITIVE");
}

}  // namespace

CLI::Validator integer_from(int64_t low, int64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end || value < low || value > high) {
          return fmt::format("{} (got '{}')", integer_range_text(low, high), text);
        }
        return {};
      },
      help_text(low, high));
}

CLI::Validator positive_finite() { return finite_from(0.0, false); }

CLI::Validator non_negative_finite() { return finite_from(0.0, true); }

}  // namespace splitbrain::tools
