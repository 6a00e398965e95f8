#pragma once
// What self_attention keeps for its backward besides its fused input, per sample: the model
// unit's cost (and so the memory walk) counts it, and the executor's op sizes its kept buffer by
// it, so predicted and measured memory agree.
//
// Unfused: the probabilities, heads x T x T in the model's dtype; dropout on them adds the
// dropped copy and a one-byte mask per probability. Fused (SelfAttentionAttrs::fused): the
// log-sum-exp of every score row, heads x T, always fp32 (as FlashAttention keeps its softmax
// statistics whatever the dtype of q, k and v).

#include <cstdint>

#include "model/op.h"

namespace splitbrain::model {

constexpr int64_t kAttentionRowStatisticBytes = 4;  // fp32 log-sum-exp of one score row
constexpr int64_t kAttentionDropoutMaskBytes = 1;   // per dropped-out probability

struct AttentionKept {
  int64_t elements = 0;  // in the model's dtype (SavedForBackward::extra_elements)
  int64_t bytes = 0;     // whatever the dtype (SavedForBackward::extra_bytes)
};

// For `attrs.heads` heads over `tokens` positions (the executor passes its local heads).
constexpr AttentionKept attention_kept_per_sample(const SelfAttentionAttrs& attrs, int64_t tokens) {
  const int64_t rows = attrs.heads * tokens;
  if (attrs.fused) return {.elements = 0, .bytes = rows * kAttentionRowStatisticBytes};
  const int64_t scores = rows * tokens;
  if (attrs.dropout > 0.0) return {.elements = 2 * scores, .bytes = scores * kAttentionDropoutMaskBytes};
  return {.elements = scores, .bytes = 0};
}

}  // namespace splitbrain::model
