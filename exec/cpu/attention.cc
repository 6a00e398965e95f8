#include "exec/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

SelfAttentionKernel::SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape)
    : SelfAttentionKernel(context, shape, kernels::attention_products(shape)) {}

SelfAttentionKernel::SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape,
                                         const kernels::AttentionProducts& products)
    : shape_(shape),
      scores_(context, products.scores),
      context_out_(context, products.context),
      grad_v_(context, products.grad_v),
      grad_p_(context, products.grad_p),
      grad_q_(context, products.grad_q),
      grad_k_(context, products.grad_k) {
  const auto per_head = static_cast<std::size_t>(shape.batch * shape.heads * shape.seq * shape.head_dim);
  for (auto* buffer : {&q_, &k_, &v_, &o_, &dq_, &dk_, &dv_}) buffer->resize(per_head);
  grad_scores_.resize(static_cast<std::size_t>(probs_elements()));
}

int64_t SelfAttentionKernel::probs_elements() const { return kernels::attention_probs_elements(shape_); }

void SelfAttentionKernel::unpack(const float* fused, int64_t parts, int64_t part, float* dense) const {
  const auto& s = shape_;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t t = 0; t < s.seq; ++t) {
      const float* row = fused + (n * s.seq + t) * s.heads * parts * s.head_dim;
      for (int64_t h = 0; h < s.heads; ++h) {
        const float* from = row + (h * parts + part) * s.head_dim;
        std::copy(from, from + s.head_dim, dense + ((n * s.heads + h) * s.seq + t) * s.head_dim);
      }
    }
}

void SelfAttentionKernel::pack(const float* dense, int64_t parts, int64_t part, float* fused) const {
  const auto& s = shape_;
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t t = 0; t < s.seq; ++t) {
      float* row = fused + (n * s.seq + t) * s.heads * parts * s.head_dim;
      for (int64_t h = 0; h < s.heads; ++h) {
        const float* from = dense + ((n * s.heads + h) * s.seq + t) * s.head_dim;
        std::copy(from, from + s.head_dim, row + (h * parts + part) * s.head_dim);
      }
    }
}

// Row-wise softmax of the scores in place; with causal, row i covers columns 0..i and the rest
// become exact zeros (so backward needs no separate mask).
void SelfAttentionKernel::masked_softmax(float* scores) const {
  const int64_t t_len = shape_.seq;
  for (int64_t r = 0; r < shape_.batch * shape_.heads * t_len; ++r) {
    float* row = scores + r * t_len;
    const int64_t visible = shape_.causal ? r % t_len + 1 : t_len;
    const float max = *std::max_element(row, row + visible);
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; ++j) sum += (row[j] = std::exp(row[j] - max));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < visible; ++j) row[j] *= inv;
    std::fill(row + visible, row + t_len, 0.0f);
  }
}

// grad holds dP on entry and dS = P (dP - sum_j dP_j P_j) on return, row by row.
void SelfAttentionKernel::softmax_backward(const float* probs, float* grad) const {
  const int64_t t_len = shape_.seq;
  for (int64_t r = 0; r < shape_.batch * shape_.heads * t_len; ++r) {
    const float* p = probs + r * t_len;
    float* g = grad + r * t_len;
    float dot = 0.0f;
    for (int64_t j = 0; j < t_len; ++j) dot += g[j] * p[j];
    for (int64_t j = 0; j < t_len; ++j) g[j] = p[j] * (g[j] - dot);
  }
}

void SelfAttentionKernel::forward(const float* qkv, float* y, float* probs) {
  unpack(qkv, 3, 0, q_.data());
  unpack(qkv, 3, 1, k_.data());
  unpack(qkv, 3, 2, v_.data());
  scores_.run(q_.data(), k_.data(), probs);
  masked_softmax(probs);
  context_out_.run(probs, v_.data(), o_.data());
  pack(o_.data(), 1, 0, y);
}

void SelfAttentionKernel::backward(const float* qkv, const float* probs, const float* dy, float* dqkv) {
  unpack(qkv, 3, 0, q_.data());
  unpack(qkv, 3, 1, k_.data());
  unpack(qkv, 3, 2, v_.data());
  unpack(dy, 1, 0, o_.data());  // o_ holds dO here
  grad_v_.run(probs, o_.data(), dv_.data());
  grad_p_.run(o_.data(), v_.data(), grad_scores_.data());
  softmax_backward(probs, grad_scores_.data());
  grad_q_.run(grad_scores_.data(), k_.data(), dq_.data());
  grad_k_.run(grad_scores_.data(), q_.data(), dk_.data());
  pack(dq_.data(), 3, 0, dqkv);
  pack(dk_.data(), 3, 1, dqkv);
  pack(dv_.data(), 3, 2, dqkv);
}

std::unique_ptr<kernels::SelfAttentionKernel> make_self_attention(CpuContext& context,
                                                                  const kernels::AttentionShape& shape) {
  return std::make_unique<SelfAttentionKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
