#pragma once
// Multi-head scaled dot-product self-attention on a fused, head-major input, forward and
// backward: x [N, T, heads * 3 * head_dim] laid out per position as [head][q|k|v][head_dim]
// (so a contiguous block of features is whole heads and splitting the heads across ranks needs
// no reshuffle), y [N, T, heads * head_dim] as [head][head_dim]. Scores are scaled by
// 1/sqrt(head_dim); causal masks future positions. `heads` is the LOCAL head count.
// Probabilities P [N, heads, T, T] are kept by the caller for backward.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct AttentionShape {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;
};

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
