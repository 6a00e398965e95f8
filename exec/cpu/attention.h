#pragma once
// Self-attention (exec/kernels/attention.h) on the CPU, multi-head or grouped-query, with
// optional rotary positions. The four batched products (Q K^T, P V; backward dV = P^T dO,
// dP = dO V^T, dQ = dS K, dK = dS^T Q) are oneDNN matmuls over batch * heads. The masked softmax
// and its backward dS = P (dP - rowsum(dP P)) are own code: oneDNN 2.6's softmax takes no mask.
// Q, K, V are copied out of the fused rows into dense per-query-head matrices first (a group's
// k and v copied to each of its heads, so the products stay one batch of equal matrices), which
// costs O(N T D) next to the O(N T^2 D) products; backward sums a group's dK and dV back into
// its one k and v. The rotation is applied to those dense copies, and undone on dQ and dK.
// With fused the caller keeps only each score row's log-sum-exp: forward writes the
// probabilities into this object's scratch and the statistics into the kept buffer, backward
// computes the scores again and makes the probabilities from them and the statistics. Under
// context parallelism (AttentionShape::queries) the products run this call's queries against
// every key: the masked scores are computed and dropped as for one whole sequence.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/cpu/batched_matmul.h"
#include "exec/cpu/cpu_context.h"
#include "exec/kernels/attention.h"

namespace splitbrain::exec::cpu {

class SelfAttentionKernel final : public kernels::SelfAttentionKernel {
 public:
  SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape);
  const kernels::AttentionShape& shape() const override { return shape_; }

  int64_t kept_elements() const override;
  void forward(const float* qkv, float* y, float* kept) override;
  void backward(const float* qkv, const float* kept, const float* dy, float* dqkv) override;

 private:
  using Part = kernels::FusedPart;
  // The global positions a part's dense rows hold: the queries', or every position's k and v.
  struct Positions {
    int64_t first = 0;
    int64_t count = 0;
  };
  Positions positions_of(Part part) const;
  SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape,
                      const kernels::AttentionProducts& products);
  // Copies a part of every query head (a key or value: its group's) out of the fused rows into
  // dense [N*heads, rows, head_dim], rotated by position when the shape has rotary positions (q, k).
  void unpack(const float* qkv, Part part, float* dense) const;
  // Writes dense per-query-head gradients into the part's columns of dqkv: dQ as is (zeros at
  // positions of other calls' queries), dK and dV summed over each group's heads; dQ and dK
  // turned back by the rotation first.
  void pack_gradient(float* dense, Part part, float* dqkv) const;
  // Turns every [head_dim] row of dense [N*heads, rows, head_dim] by its global position's
  // angles: forward (+1) x cos + rotate_half(x) sin, or back (-1), the transpose, for gradients.
  void rotate(float* dense, Positions rows, int direction) const;
  // The keys score row r (of batch x heads x query rows) sees: up to its query's position when causal.
  int64_t visible_keys(int64_t score_row) const;
  // The probabilities from the scores in place; with `log_sum_exp` also each row's log-sum-exp.
  void masked_softmax(float* scores, float* log_sum_exp) const;
  // Fused backward: the probabilities again from the scores in place, exp(S - L) row by row.
  void probabilities_from_statistics(float* scores, const float* log_sum_exp) const;
  void softmax_backward(const float* probs, float* grad) const;

  kernels::AttentionShape shape_;
  kernels::GroupedHeads layout_;
  // One per product of kernels::AttentionProducts, in its order.
  BatchedMatmulKernel scores_, context_out_, grad_v_, grad_p_, grad_q_, grad_k_;
  std::vector<float> q_, k_, v_, o_, dq_, dk_, dv_, grad_scores_;
  std::vector<float> probabilities_;  // fused only: P of the call, not kept between them
  // cos and sin of position t's angle for pair i at [t * head_dim/2 + i] (rotary positions only).
  std::vector<float> cos_, sin_;
};

}  // namespace splitbrain::exec::cpu
