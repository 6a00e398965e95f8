#include "exec/data/token_sequences.h"

#include <fmt/format.h>

#include "exec/data/seeded_hash.h"
#include "model/errors.h"

namespace splitbrain::exec::data {

namespace {
constexpr int64_t kLargestExactFloatId = int64_t{1} << 24;
constexpr uint64_t kStrides = 7;
}  // namespace

TokenSequences::TokenSequences(const TokenSequenceOptions& options) : options_(options) {
  if (options.vocab < 2 || options.vocab > kLargestExactFloatId) {
    throw InputError(fmt::format("token sequences: vocab {} must be in [2, 2^24]", options.vocab));
  }
  if (options.positions < 1)
    throw InputError(fmt::format("token sequences: positions {} must be >= 1", options.positions));
}

int64_t TokenSequences::token(int64_t step, int64_t sample, int64_t position) const {
  const uint64_t h = hash_keys(options_.seed, {static_cast<uint64_t>(step), static_cast<uint64_t>(sample)});
  const auto vocab = static_cast<uint64_t>(options_.vocab);
  const uint64_t start = h % vocab;
  const uint64_t stride = 1 + (h >> 32) % kStrides;
  // stride * position stays far below 2^64 for any position an activation can hold.
  return static_cast<int64_t>((start + stride * static_cast<uint64_t>(position)) % vocab);
}

void TokenSequences::inputs(int64_t step, int64_t first, int64_t count, float* out) const {
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t t = 0; t < options_.positions; ++t) {
      out[k * options_.positions + t] = static_cast<float>(token(step, first + k, t));
    }
  }
}

std::vector<int32_t> TokenSequences::labels(int64_t step, int64_t first, int64_t count) const {
  std::vector<int32_t> out(static_cast<size_t>(count * options_.positions));
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t t = 0; t < options_.positions; ++t) {
      out[static_cast<size_t>(k * options_.positions + t)] = static_cast<int32_t>(token(step, first + k, t + 1));
    }
  }
  return out;
}

}  // namespace splitbrain::exec::data
