#pragma once
// Numbers for people: decimal prefixes (GB = 1e9 bytes, GFLOP = 1e9 FLOPs), as everywhere in
// splitbrain. Machine-readable outputs (JSON, CSV) always carry the exact integers instead.

#include <cstdint>
#include <string>

namespace splitbrain::tools {

std::string human_bytes(double bytes);                 // 553.4 MB
std::string human_flops(double flops);                 // 30.95 GFLOP
std::string with_thousands_separators(int64_t value);  // 138,357,544

}  // namespace splitbrain::tools
