#pragma once
// Checks of the number flags, said in a user's terms: "--batch: must be a positive integer (at
// most 9223372036854775807)". CLI11's own PositiveNumber prints a range up to 1.8e308 for an
// integer, lets NaN through (every comparison with it is false), and leaves an integer too large
// for its type to the conversion, which clamps it or fails without naming the flag. These parse
// the text themselves, in full, before any conversion.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace splitbrain::tools {

// An integer from `low` to `high`, written in full (no fraction, no exponent, nothing after it).
CLI::Validator integer_from(int64_t low, int64_t high);

// An integer from 1 (or 0) to the largest value of the flag's type (of its elements, for a list).
template <typename T>
CLI::Validator positive_integer_for(const T&) {
  return integer_from(1, static_cast<int64_t>(std::numeric_limits<T>::max()));
}
template <typename T>
CLI::Validator positive_integer_for(const std::vector<T>&) {
  return positive_integer_for(T{});
}
template <typename T>
CLI::Validator non_negative_integer_for(const T&) {
  return integer_from(0, static_cast<int64_t>(std::numeric_limits<T>::max()));
}

// A finite number above 0 (or at least 0): NaN and infinity refused.
CLI::Validator positive_finite();
CLI::Validator non_negative_finite();

}  // namespace splitbrain::tools
