#pragma once
// Multi-head scaled dot-product self-attention on a fused, head-major input, forward and
// backward: x [N, T, heads * 3 * head_dim] laid out per position as [head][q|k|v][head_dim]
// (so a contiguous block of features is whole heads and splitting the heads across ranks needs
// no reshuffle), y [N, T, heads * head_dim] as [head][head_dim]. Scores are scaled by
// 1/sqrt(head_dim); causal masks future positions. `heads` is the LOCAL head count.
// Probabilities P [N, heads, T, T] are kept by the caller for backward.

#include <cstdint>

#include "exec/kernels/batched_matmul.h"

namespace splitbrain::exec::kernels {

struct AttentionShape {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;
};

// The six batched products attention is made of, over the batch x heads [T, head_dim] blocks
// of Q, K, V (scale = 1/sqrt(head_dim)), the same in every backend.
struct AttentionProducts {
  BatchedMatmulShape scores;   // S = scale Q K^T
  BatchedMatmulShape context;  // O = P V
  BatchedMatmulShape grad_v;   // dV = P^T dO
  BatchedMatmulShape grad_p;   // dP = dO V^T
  BatchedMatmulShape grad_q;   // dQ = scale dS K
  BatchedMatmulShape grad_k;   // dK = scale dS^T Q
};
// Throws KernelArgumentError ("SelfAttentionKernel: ...") unless every extent is positive.
AttentionProducts attention_products(const AttentionShape& shape);
// Floats of the probabilities: batch * heads * seq * seq.
inline int64_t attention_probs_elements(const AttentionShape& s) { return s.batch * s.heads * s.seq * s.seq; }

class SelfAttentionKernel {
 public:
  virtual ~SelfAttentionKernel() = default;
  virtual const AttentionShape& shape() const = 0;

  // Floats of the probabilities forward writes and backward reads: batch * heads * seq * seq.
  virtual int64_t probs_elements() const = 0;
  virtual void forward(const float* qkv, float* y, float* probs) = 0;
  // dqkv (overwritten) has the fused layout of qkv.
  virtual void backward(const float* qkv, const float* probs, const float* dy, float* dqkv) = 0;
};

}  // namespace splitbrain::exec::kernels
