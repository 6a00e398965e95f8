#pragma once
// What every reader fuzz target shares: the input as text, and the rule that bad input may only
// ever end in an InputError (exit code 2 at the command line). Any other exception escapes and
// libFuzzer reports it, as it reports crashes, hangs and sanitizer findings.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/errors.h"

namespace splitbrain::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Read>
int read_or_refuse(const Read& read) {
  try {
    read();
  } catch (const InputError&) {
    // A clear refusal is the right answer to bad input.
  }
  return 0;
}

}  // namespace splitbrain::fuzz
