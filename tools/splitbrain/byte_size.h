#pragma once
// Parses sizes users type: "80000000000", "80e9", "80GB", "74.5GiB", "512MB" (decimal prefixes
// are powers of 1000, binary ones powers of 1024).

#include <cstdint>
#include <string_view>

namespace splitbrain::tools {

// Throws InputError naming `flag` when the text is not a positive size.
int64_t parse_byte_size(std::string_view text, std::string_view flag);

}  // namespace splitbrain::tools
