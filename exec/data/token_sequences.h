#pragma once
// Synthetic token sequences for language models (GPT in the zoo), for runs and tests without a
// text corpus. Sample i of step s is an arithmetic progression modulo the vocabulary:
//
//   h          = hash_keys(seed, {s, i})                          (seeded_hash.h)
//   start      = h mod vocab,  stride = 1 + (h >> 32) mod 7
//   token(t)   = (start + t * stride) mod vocab,   t = 0 .. positions
//
// The model reads tokens 0 .. positions-1 and predicts the next one at each position (labels
// are tokens 1 .. positions), so the task is learnable from the two previous tokens and a
// training run sees its loss fall. Every value is a pure function of (seed, step, sample,
// position): each rank produces its own samples alone, the same on every rank and platform.
// tools/pytorch_golden_gpt.py computes the same sequences.

#include <cstdint>
#include <vector>

namespace splitbrain::exec::data {

struct TokenSequenceOptions {
  int64_t vocab = 2;
  int64_t positions = 1;  // tokens the model reads per sample
  uint64_t seed = 0;
};

class TokenSequences {
 public:
  // Throws InputError for a vocabulary below 2, positions below 1, or ids that would not be
  // exact as float32 (a vocabulary above 2^24).
  explicit TokenSequences(const TokenSequenceOptions& options);

  int64_t token(int64_t step, int64_t sample, int64_t position) const;
  // Samples [first, first + count) of step `step`: out[k * positions + t], as floats (the
  // runtime keeps activations in fp32; ids below 2^24 are exact).
  void inputs(int64_t step, int64_t first, int64_t count, float* out) const;
  // The next token at every position of those samples, sample-major (count * positions).
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) const;

 private:
  TokenSequenceOptions options_;
};

}  // namespace splitbrain::exec::data
