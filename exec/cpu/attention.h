#pragma once
// Multi-head scaled dot-product self-attention on a fused, head-major input, forward and
// backward: x [N, T, heads * 3 * head_dim] laid out per position as [head][q|k|v][head_dim]
// (so a contiguous block of features is whole heads and splitting the heads across ranks needs
// no reshuffle), y [N, T, heads * head_dim] as [head][head_dim]. Scores are scaled by
// 1/sqrt(head_dim); causal masks future positions. `heads` is the LOCAL head count.
//
// The four batched products (Q K^T, P V; backward dV = P^T dO, dP = dO V^T, dQ = dS K,
// dK = dS^T Q) are oneDNN matmuls over batch * heads. The masked softmax and its backward
// dS = P (dP - rowsum(dP P)) are own code: oneDNN 2.6's softmax takes no mask. Q, K, V are
// copied out of the fused rows into dense per-head matrices first, which costs O(N T D) next to
// the O(N T^2 D) products. Probabilities P [N, heads, T, T] are kept by the caller for backward.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/cpu/batched_matmul.h"
#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

struct AttentionShape {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;
};

class SelfAttentionKernel {
 public:
  SelfAttentionKernel(CpuContext& context, const AttentionShape& shape);
  const AttentionShape& shape() const { return shape_; }

  // Floats of the probabilities forward writes and backward reads: batch * heads * seq * seq.
  int64_t probs_elements() const;
  void forward(const float* qkv, float* y, float* probs);
  // dqkv (overwritten) has the fused layout of qkv.
  void backward(const float* qkv, const float* probs, const float* dy, float* dqkv);

 private:
  // Copies between the fused rows and dense [N*heads, T, head_dim] matrices.
  void unpack(const float* fused, int64_t parts, int64_t part, float* dense) const;
  void pack(const float* dense, int64_t parts, int64_t part, float* fused) const;
  void masked_softmax(float* scores) const;
  void softmax_backward(const float* probs, float* grad) const;

  AttentionShape shape_;
  BatchedMatmulKernel scores_;       // S = scale Q K^T
  BatchedMatmulKernel context_out_;  // O = P V
  BatchedMatmulKernel grad_v_;       // dV = P^T dO
  BatchedMatmulKernel grad_p_;       // dP = dO V^T
  BatchedMatmulKernel grad_q_;       // dQ = scale dS K
  BatchedMatmulKernel grad_k_;       // dK = scale dS^T Q
  std::vector<float> q_, k_, v_, o_, dq_, dk_, dv_, grad_scores_;
};

}  // namespace splitbrain::exec::cpu
