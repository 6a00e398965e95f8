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

// For `attrs.heads` heads of `query_tokens` queries against `key_tokens` keys (the executor
// passes its local heads; under context parallelism its share of the queries).
constexpr AttentionKept attention_kept_per_sample(const SelfAttentionAttrs& attrs, int64_t key_tokens,
                                                  int64_t query_tokens) {
  const int64_t rows = attrs.heads * query_tokens;
  if (attrs.fused) return {.elements = 0, .bytes = rows * kAttentionRowStatisticBytes};
  const int64_t scores = rows * key_tokens;
  if (attrs.dropout > 0.0) return {.elements = 2 * scores, .bytes = scores * kAttentionDropoutMaskBytes};
  return {.elements = scores, .bytes = 0};
}

// Every position's query against every key: `tokens` of each.
constexpr AttentionKept attention_kept_per_sample(const SelfAttentionAttrs& attrs, int64_t tokens) {
  return attention_kept_per_sample(attrs, tokens, tokens);
}

}  // namespace splitbrain::model
