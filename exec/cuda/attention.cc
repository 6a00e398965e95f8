#include "exec/cuda/attention.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grouped_heads_kernels.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/cuda/softmax_statistics_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

// y and dy: [N, query rows, heads * head_dim].
HeadLayout layout(const kernels::AttentionShape& s) { return {s.batch, s.query_rows(), s.heads, s.head_dim}; }

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

SelfAttentionKernel::SelfAttentionKernel(CudaContext& context, const kernels::AttentionShape& shape)
    : context_(context),
      shape_(kernels::checked(shape)),
      score_rows_(shape.batch * shape.heads * shape.query_rows(), shape.seq, 1, 1),
      products_(kernels::attention_products(shape)) {
  const auto dense_bytes = [&](int64_t rows) { return float_bytes(shape.batch * shape.heads * rows * shape.head_dim); };
  for (DeviceBuffer* buffer : {&q_, &o_, &dq_}) *buffer = DeviceBuffer(dense_bytes(shape.query_rows()));
  for (DeviceBuffer* buffer : {&k_, &v_, &dk_, &dv_}) *buffer = DeviceBuffer(dense_bytes(shape.seq));
  grad_scores_ = DeviceBuffer(float_bytes(kernels::attention_probs_elements(shape)));
  if (shape.fused) probabilities_ = DeviceBuffer(float_bytes(kernels::attention_probs_elements(shape)));
}

int64_t SelfAttentionKernel::kept_elements() const { return kernels::attention_kept_elements(shape_); }

void SelfAttentionKernel::unpack_qkv(const float* qkv) {
  cudaStream_t stream = context_.stream();
  unpack_grouped(stream, shape_, FusedPart::query, qkv, q_.as<float>());
  unpack_grouped(stream, shape_, FusedPart::key, qkv, k_.as<float>());
  unpack_grouped(stream, shape_, FusedPart::value, qkv, v_.as<float>());
  if (shape_.rope_theta > 0.0) {
    rotate_positions(stream, shape_, FusedPart::query, +1, q_.as<float>());
    rotate_positions(stream, shape_, FusedPart::key, +1, k_.as<float>());
  }
}

void SelfAttentionKernel::masked_scores(float* scores) {
  batched_matmul_on_device(context_.cublas(), products_.scores, q_.as<float>(), k_.as<float>(), scores);
  if (shape_.causal) {
    mask_future(context_.stream(), shape_.batch * shape_.heads, shape_.query_rows(), shape_.seq, shape_.query_start,
                scores);
  }
}

void SelfAttentionKernel::forward(const float* qkv, float* y, float* kept) {
  cudaStream_t stream = context_.stream();
  cublasHandle_t cublas = context_.cublas();
  const float one = 1.0f, zero = 0.0f;
  unpack_qkv(qkv);
  masked_scores(grad_scores_.as<float>());
  float* probs = shape_.fused ? probabilities_.as<float>() : kept;
  SB_CUDNN_CHECK(cudnnSoftmaxForward(context_.cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                     score_rows_.get(), grad_scores_.data(), &zero, score_rows_.get(), probs));
  if (shape_.fused)
    row_log_sum_exp(stream, shape_.batch * shape_.heads * shape_.query_rows(), shape_.seq, grad_scores_.as<float>(),
                    kept);
  batched_matmul_on_device(cublas, products_.context, probs, v_.as<float>(), o_.as<float>());
  pack_heads(stream, layout(shape_), 1, 0, o_.as<float>(), y);
}

void SelfAttentionKernel::backward(const float* qkv, const float* kept, const float* dy, float* dqkv) {
  cudaStream_t stream = context_.stream();
  cublasHandle_t cublas = context_.cublas();
  const float one = 1.0f, zero = 0.0f;
  unpack_qkv(qkv);
  const float* probs = kept;
  if (shape_.fused) {  // S again, then P = exp(S - L) in place
    masked_scores(probabilities_.as<float>());
    probabilities_from_log_sum_exp(stream, shape_.batch * shape_.heads * shape_.query_rows(), shape_.seq, kept,
                                   probabilities_.as<float>());
    probs = probabilities_.as<float>();
  }
  unpack_heads(stream, layout(shape_), 1, 0, dy, o_.as<float>());  // o_ holds dO here
  batched_matmul_on_device(cublas, products_.grad_v, probs, o_.as<float>(), dv_.as<float>());
  batched_matmul_on_device(cublas, products_.grad_p, o_.as<float>(), v_.as<float>(), grad_scores_.as<float>());
  // dS = P (dP - rowsum(dP P)), in place over dP (cuDNN allows dy == dx with one descriptor).
  SB_CUDNN_CHECK(cudnnSoftmaxBackward(context_.cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                      score_rows_.get(), probs, score_rows_.get(), grad_scores_.data(), &zero,
                                      score_rows_.get(), grad_scores_.data()));
  batched_matmul_on_device(cublas, products_.grad_q, grad_scores_.as<float>(), k_.as<float>(), dq_.as<float>());
  batched_matmul_on_device(cublas, products_.grad_k, grad_scores_.as<float>(), q_.as<float>(), dk_.as<float>());
  if (shape_.rope_theta > 0.0) {  // the gradients of the unrotated q and k
    rotate_positions(stream, shape_, FusedPart::query, -1, dq_.as<float>());
    rotate_positions(stream, shape_, FusedPart::key, -1, dk_.as<float>());
  }
  // The three parts together overwrite all of dqkv.
  pack_grouped_gradient(stream, shape_, FusedPart::query, dq_.as<float>(), dqkv);
  pack_grouped_gradient(stream, shape_, FusedPart::key, dk_.as<float>(), dqkv);
  pack_grouped_gradient(stream, shape_, FusedPart::value, dv_.as<float>(), dqkv);
}

std::unique_ptr<kernels::SelfAttentionKernel> make_self_attention(CudaContext& context,
                                                                  const kernels::AttentionShape& shape) {
  return std::make_unique<SelfAttentionKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
