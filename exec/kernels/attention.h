#pragma once
// Scaled dot-product self-attention on a fused, group-major input, forward and backward, with
// grouped-query attention and rotary positions (model/op.h SelfAttentionAttrs documents both):
// x [N, T, (heads + 2 * kv_heads) * head_dim] laid out per position, for each of the kv_heads
// groups, as [its heads / kv_heads query heads][k][v], each head_dim wide (with kv_heads = heads
// that is [head][q|k|v][head_dim], so a contiguous block of features is whole groups and
// splitting the groups across ranks needs no reshuffle); y [N, T, heads * head_dim] as
// [head][head_dim]. Every query head of a group attends with the group's k and v. Scores are
// scaled by 1/sqrt(head_dim); causal masks future positions; with rope_theta > 0, q and k are
// rotated by position first (Hugging Face Llama's rotate-half) and backward recomputes the
// rotation. `heads` and `kv_heads` are LOCAL counts (kv_heads 0 = heads). What backward reads
// besides qkv is kept by the caller: the probabilities P [N, heads, T, T], or with `fused` only
// the log-sum-exp L [N, heads, T] of every (scaled, masked) score row, from which backward makes
// P = exp(S - L) again after computing the scores S once more (FlashAttention's memory; the
// kernels still hold the T x T matrices of one call in their own scratch).

#include <cstdint>

#include "exec/kernels/batched_matmul.h"

namespace splitbrain::exec::kernels {

struct AttentionShape {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;
  int64_t kv_heads = 0;     // 0 = heads (multi-head attention)
  double rope_theta = 0.0;  // 0 = no rotary positions
  bool fused = false;       // keep the row statistics rather than the probabilities
  // Context parallelism: this call's queries are the global positions [query_start, query_start +
  // queries) of the seq positions whose keys and values it reads (0 queries: every position). The
  // causal mask and the queries' rotation use those global positions; y, dy and the kept values
  // have query_rows() rows; dqkv has all seq rows (q columns zero outside this call's queries, k
  // and v columns this call's share of their gradient: a partial sum over the callers).
  int64_t queries = 0;
  int64_t query_start = 0;

  constexpr int64_t query_rows() const { return queries > 0 ? queries : seq; }
};

// The three parts of a fused row a query head reads: its own q, and its group's k and v.
enum class FusedPart { query, key, value };

// Where each head's part sits in a fused row, in floats from the row's start. constexpr, so the
// CUDA backend's own kernels run this very arithmetic on the device.
struct GroupedHeads {
  int64_t heads = 1;
  int64_t kv_heads = 1;
  int64_t head_dim = 1;

  constexpr explicit GroupedHeads(const AttentionShape& s)
      : heads(s.heads), kv_heads(s.kv_heads > 0 ? s.kv_heads : s.heads), head_dim(s.head_dim) {}
  constexpr int64_t group() const { return heads / kv_heads; }  // query heads per kv head
  constexpr int64_t row_width() const { return (heads + 2 * kv_heads) * head_dim; }
  constexpr int64_t query_offset(int64_t head) const {
    return (head / group() * (group() + 2) + head % group()) * head_dim;
  }
  constexpr int64_t key_offset(int64_t kv_head) const { return (kv_head * (group() + 2) + group()) * head_dim; }
  constexpr int64_t value_offset(int64_t kv_head) const { return key_offset(kv_head) + head_dim; }
  // The part query head `head` reads: its own q, or the k or v of its group.
  constexpr int64_t offset_of(FusedPart part, int64_t head) const {
    if (part == FusedPart::query) return query_offset(head);
    return part == FusedPart::key ? key_offset(head / group()) : value_offset(head / group());
  }
};

// The six batched products attention is made of, over the batch x heads blocks of Q [queries,
// head_dim] and K, V [T, head_dim] (scale = 1/sqrt(head_dim)), the same in every backend.
struct AttentionProducts {
  BatchedMatmulShape scores;   // S = scale Q K^T
  BatchedMatmulShape context;  // O = P V
  BatchedMatmulShape grad_v;   // dV = P^T dO
  BatchedMatmulShape grad_p;   // dP = dO V^T
  BatchedMatmulShape grad_q;   // dQ = scale dS K
  BatchedMatmulShape grad_k;   // dK = scale dS^T Q
};
// Throws KernelArgumentError ("SelfAttentionKernel: ...") unless every extent is positive, kv_heads
// divides heads, head_dim is even under rotary positions and the queries lie within seq.
AttentionProducts attention_products(const AttentionShape& shape);
// Floats of the probabilities: batch * heads * query rows * seq.
inline int64_t attention_probs_elements(const AttentionShape& s) { return s.batch * s.heads * s.query_rows() * s.seq; }
// Floats forward keeps for backward: the probabilities, or with fused a log-sum-exp per score row.
inline int64_t attention_kept_elements(const AttentionShape& s) {
  return s.fused ? s.batch * s.heads * s.query_rows() : attention_probs_elements(s);
}

class SelfAttentionKernel {
 public:
  virtual ~SelfAttentionKernel() = default;
  virtual const AttentionShape& shape() const = 0;

  // Floats forward writes into `kept` and backward reads: attention_kept_elements(shape()).
  virtual int64_t kept_elements() const = 0;
  virtual void forward(const float* qkv, float* y, float* kept) = 0;
  // dqkv (overwritten) has the fused layout of qkv.
  virtual void backward(const float* qkv, const float* kept, const float* dy, float* dqkv) = 0;
};

}  // namespace splitbrain::exec::kernels
