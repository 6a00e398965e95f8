#pragma once
// Multi-head self-attention (exec/kernels/attention.h) on the CPU. The four batched products
// (Q K^T, P V; backward dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q) are oneDNN matmuls over
// batch * heads. The masked softmax and its backward dS = P (dP - rowsum(dP P)) are own code:
// oneDNN 2.6's softmax takes no mask. Q, K, V are copied out of the fused rows into dense
// per-head matrices first, which costs O(N T D) next to the O(N T^2 D) products.

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

  int64_t probs_elements() const override;
  void forward(const float* qkv, float* y, float* probs) override;
  void backward(const float* qkv, const float* probs, const float* dy, float* dqkv) override;

 private:
  SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape,
                      const kernels::AttentionProducts& products);
  // Copies between the fused rows and dense [N*heads, T, head_dim] matrices.
  void unpack(const float* fused, int64_t parts, int64_t part, float* dense) const;
  void pack(const float* dense, int64_t parts, int64_t part, float* fused) const;
  void masked_softmax(float* scores) const;
  void softmax_backward(const float* probs, float* grad) const;

  kernels::AttentionShape shape_;
  // One per product of kernels::AttentionProducts, in its order.
  BatchedMatmulKernel scores_, context_out_, grad_v_, grad_p_, grad_q_, grad_k_;
  std::vector<float> q_, k_, v_, o_, dq_, dk_, dv_, grad_scores_;
};

}  // namespace splitbrain::exec::cpu
