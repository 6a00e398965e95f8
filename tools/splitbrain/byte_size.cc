#include "tools/splitbrain/byte_size.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "model/errors.h"

namespace splitbrain::tools {

int64_t parse_byte_size(std::string_view text, std::string_view flag) {
  constexpr std::array<std::pair<std::string_view, double>, 10> kUnits = {{{"KiB", 1024.0},
                                                                           {"MiB", 1024.0 * 1024},
                                                                           {"GiB", 1024.0 * 1024 * 1024},
                                                                           {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                                                           {"KB", 1e3},
                                                                           {"MB", 1e6},
                                                                           {"GB", 1e9},
                                                                           {"TB", 1e12},
                                                                           {"B", 1.0},
                                                                           {"", 1.0}}};
  const std::string copy(text);
  char* end = nullptr;
  const double number = std::strtod(copy.c_str(), &end);
  const std::string_view unit(end);
  for (const auto& [suffix, scale] : kUnits) {
    if (unit != suffix) continue;
    const double bytes = number * scale;
    if (end == copy.c_str() || !std::isfinite(bytes) || bytes < 1 || bytes > 9.2e18) break;
    return static_cast<int64_t>(bytes);
  }
  throw InputError(
      fmt::format("{}: '{}' is not a size in bytes (examples: 80000000000, 80e9, 80GB, 74.5GiB)", flag, text));
}

}  // namespace splitbrain::tools
