#pragma once
// Self-attention on the GPU, multi-head or grouped-query, with optional rotary positions: the
// twin of cpu::SelfAttentionKernel (same shape type, fused group-major qkv
// [N, T, (heads + 2 kv_heads) * head_dim], y [N, T, heads * head_dim], probabilities
// [N, heads, T, T] kept by the caller). The same steps as the CPU: Q, K, V copied out of the
// fused rows into dense per-query-head matrices, a group's k and v to each of its heads, and q
// and k rotated by position (own kernels, grouped_heads_kernels.h), the six batched products on
// cuBLAS (batched_matmul_on_device), and the softmax with cuDNN: the causal mask sets future
// scores to -inf, so cudnnSoftmaxForward gives them exact zeros and cudnnSoftmaxBackward's
// P (dP - rowsum(dP P)) is the CPU's dS. Backward rotates q and k again from the positions, turns
// dQ and dK back, and sums each group's dK and dV into its one k and v. With fused the caller
// keeps each score row's log-sum-exp (softmax_statistics_kernels.h) instead of the
// probabilities: forward writes the probabilities into this object's buffer, backward computes
// the scores again and the probabilities from them and the statistics.
//
// Every argument is device memory (cuda_context.h): the steps read qkv, dy and the probabilities
// and write y, the probabilities and dqkv where the caller has them, queued on the context's
// stream, and return without waiting. This object's device buffers, allocated once, hold only
// what has no argument: the dense per-head matrices and the scores.
//
// Under context parallelism (AttentionShape::queries) q, y, dy, the scores and what is kept have
// the call's query rows only, k and v every position, and dqkv is whole (q zero outside the
// call's queries), as on the CPU.

#include <cstdint>

#include "exec/cuda/batched_matmul.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/device_buffer.h"
#include "exec/kernels/attention.h"

namespace splitbrain::exec::cuda {

class SelfAttentionKernel final : public kernels::SelfAttentionKernel {
 public:
  SelfAttentionKernel(CudaContext& context, const kernels::AttentionShape& shape);
  const kernels::AttentionShape& shape() const override { return shape_; }

  // Floats forward writes into `kept` and backward reads: kernels::attention_kept_elements.
  int64_t kept_elements() const override;
  void forward(const float* qkv, float* y, float* kept) override;
  // dqkv (overwritten) has the fused layout of qkv.
  void backward(const float* qkv, const float* kept, const float* dy, float* dqkv) override;

 private:
  // Copies Q, K and V out of the fused qkv, q and k rotated when the shape has rotary positions.
  void unpack_qkv(const float* qkv);
  // The masked scores S = scale Q K^T of the unpacked q and k into `scores`.
  void masked_scores(float* scores);

  CudaContext& context_;
  kernels::AttentionShape shape_;
  TensorDescriptor score_rows_;  // [batch * heads * query rows, seq, 1, 1]: one softmax per row
  kernels::AttentionProducts products_;
  DeviceBuffer q_, k_, v_, o_;  // dense [N * heads, rows, head_dim]; o_ holds dO in backward
  DeviceBuffer dq_, dk_, dv_;
  DeviceBuffer grad_scores_;    // [N * heads, query rows, T]: the scores, then dP and dS in backward
  DeviceBuffer probabilities_;  // fused only: as grad_scores_, of the call, not kept between them
};

}  // namespace splitbrain::exec::cuda
