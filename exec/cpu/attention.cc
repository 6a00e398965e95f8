#include "exec/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/cpu/dnnl_check.h"
#include "exec/kernels/shape_checks.h"

namespace splitbrain::exec::cpu {

SelfAttentionKernel::SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape)
    : SelfAttentionKernel(context, shape, kernels::attention_products(shape)) {}

SelfAttentionKernel::SelfAttentionKernel(CpuContext& context, const kernels::AttentionShape& shape,
                                         const kernels::AttentionProducts& products)
    : shape_(kernels::checked(shape)),
      layout_(shape),
      scores_(context, products.scores),
      context_out_(context, products.context),
      grad_v_(context, products.grad_v),
      grad_p_(context, products.grad_p),
      grad_q_(context, products.grad_q),
      grad_k_(context, products.grad_k) {
  const auto dense_of = [&](int64_t rows) {
    return static_cast<std::size_t>(shape.batch * shape.heads * rows * shape.head_dim);
  };
  for (auto* buffer : {&q_, &o_, &dq_}) buffer->resize(dense_of(shape.query_rows()));
  for (auto* buffer : {&k_, &v_, &dk_, &dv_}) buffer->resize(dense_of(shape.seq));
  grad_scores_.resize(static_cast<std::size_t>(kernels::attention_probs_elements(shape)));
  if (shape.fused) probabilities_.resize(grad_scores_.size());
  if (shape.rope_theta > 0.0) {
    // Pair i turns by t * theta^(-2i/head_dim), computed in double once for every position.
    const int64_t pairs = shape.head_dim / 2;
    cos_.resize(static_cast<std::size_t>(shape.seq * pairs));
    sin_.resize(cos_.size());
    for (int64_t t = 0; t < shape.seq; ++t)
      for (int64_t i = 0; i < pairs; ++i) {
        const double angle =
            static_cast<double>(t) *
            std::pow(shape.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(shape.head_dim));
        cos_[static_cast<std::size_t>(t * pairs + i)] = static_cast<float>(std::cos(angle));
        sin_[static_cast<std::size_t>(t * pairs + i)] = static_cast<float>(std::sin(angle));
      }
  }
}

int64_t SelfAttentionKernel::kept_elements() const { return kernels::attention_kept_elements(shape_); }

SelfAttentionKernel::Positions SelfAttentionKernel::positions_of(Part part) const {
  if (part == Part::query) return {shape_.query_start, shape_.query_rows()};
  return {0, shape_.seq};
}

void SelfAttentionKernel::unpack(const float* qkv, Part part, float* dense) const {
  const auto& s = shape_;
  const Positions rows = positions_of(part);
  const int64_t width = layout_.row_width();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t t = 0; t < rows.count; ++t) {
      const float* row = qkv + (n * s.seq + rows.first + t) * width;
      for (int64_t h = 0; h < s.heads; ++h) {
        const int64_t offset = layout_.offset_of(part, h);
        std::copy(row + offset, row + offset + s.head_dim, dense + ((n * s.heads + h) * rows.count + t) * s.head_dim);
      }
    }
  if (part != Part::value && !cos_.empty()) rotate(dense, rows, +1);
}

void SelfAttentionKernel::pack_gradient(float* dense, Part part, float* dqkv) const {
  const auto& s = shape_;
  const Positions rows = positions_of(part);
  if (part != Part::value && !cos_.empty()) rotate(dense, rows, -1);
  const int64_t width = layout_.row_width(), group = layout_.group();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t position = 0; position < s.seq; ++position) {
      float* row = dqkv + (n * s.seq + position) * width;
      const int64_t t = position - rows.first;  // the dense row
      auto head_row = [&](int64_t h) { return dense + ((n * s.heads + h) * rows.count + t) * s.head_dim; };
      if (part == Part::query) {
        // Positions whose queries another call holds get no gradient of their q here.
        const bool own = t >= 0 && t < rows.count;
        for (int64_t h = 0; h < s.heads; ++h) {
          float* out = row + layout_.query_offset(h);
          if (own) {
            std::copy(head_row(h), head_row(h) + s.head_dim, out);
          } else {
            std::fill(out, out + s.head_dim, 0.0f);
          }
        }
        continue;
      }
      // A group's k (or v) served each of its heads: its gradient is their sum.
      for (int64_t g = 0; g < layout_.kv_heads; ++g) {
        float* out = row + (part == Part::key ? layout_.key_offset(g) : layout_.value_offset(g));
        std::copy(head_row(g * group), head_row(g * group) + s.head_dim, out);
        for (int64_t j = 1; j < group; ++j) {
          const float* from = head_row(g * group + j);
          for (int64_t d = 0; d < s.head_dim; ++d) out[d] += from[d];
        }
      }
    }
}

// Hugging Face's rotate-half: with x1, x2 the first and second halves of a head and (c, s) a
// pair's cos and sin, forward gives (x1 c - x2 s, x2 c + x1 s); the transpose (the opposite
// angle) gives (g1 c + g2 s, g2 c - g1 s).
void SelfAttentionKernel::rotate(float* dense, Positions rows, int direction) const {
  const int64_t pairs = shape_.head_dim / 2;
  const auto sign = static_cast<float>(direction);
  for (int64_t m = 0; m < shape_.batch * shape_.heads; ++m)
    for (int64_t t = 0; t < rows.count; ++t) {
      float* x = dense + (m * rows.count + t) * shape_.head_dim;
      const float* c = cos_.data() + (rows.first + t) * pairs;
      const float* s = sin_.data() + (rows.first + t) * pairs;
      for (int64_t i = 0; i < pairs; ++i) {
        const float first = x[i], second = x[i + pairs], turn = sign * s[i];
        x[i] = first * c[i] - second * turn;
        x[i + pairs] = second * c[i] + first * turn;
      }
    }
}

int64_t SelfAttentionKernel::visible_keys(int64_t score_row) const {
  return shape_.causal ? shape_.query_start + score_row % shape_.query_rows() + 1 : shape_.seq;
}

// Row-wise softmax of the scores in place; with causal, the row of the query at global position
// i covers columns 0..i and the rest become exact zeros (so backward needs no separate mask). The
// row's log-sum-exp is max + log(sum of exp(s - max)).
void SelfAttentionKernel::masked_softmax(float* scores, float* log_sum_exp) const {
  const int64_t t_len = shape_.seq;
  for (int64_t r = 0; r < shape_.batch * shape_.heads * shape_.query_rows(); ++r) {
    float* row = scores + r * t_len;
    const int64_t visible = visible_keys(r);
    const float max = *std::max_element(row, row + visible);
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; ++j) sum += (row[j] = std::exp(row[j] - max));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < visible; ++j) row[j] *= inv;
    std::fill(row + visible, row + t_len, 0.0f);
    if (log_sum_exp != nullptr) log_sum_exp[r] = max + std::log(sum);
  }
}

void SelfAttentionKernel::probabilities_from_statistics(float* scores, const float* log_sum_exp) const {
  const int64_t t_len = shape_.seq;
  for (int64_t r = 0; r < shape_.batch * shape_.heads * shape_.query_rows(); ++r) {
    float* row = scores + r * t_len;
    const int64_t visible = visible_keys(r);
    for (int64_t j = 0; j < visible; ++j) row[j] = std::exp(row[j] - log_sum_exp[r]);
    std::fill(row + visible, row + t_len, 0.0f);
  }
}

// grad holds dP on entry and dS = P (dP - sum_j dP_j P_j) on return, row by row.
void SelfAttentionKernel::softmax_backward(const float* probs, float* grad) const {
  const int64_t t_len = shape_.seq;
  for (int64_t r = 0; r < shape_.batch * shape_.heads * shape_.query_rows(); ++r) {
    const float* p = probs + r * t_len;
    float* g = grad + r * t_len;
    float dot = 0.0f;
    for (int64_t j = 0; j < t_len; ++j) dot += g[j] * p[j];
    for (int64_t j = 0; j < t_len; ++j) g[j] = p[j] * (g[j] - dot);
  }
}

void SelfAttentionKernel::forward(const float* qkv, float* y, float* kept) {
  unpack(qkv, Part::query, q_.data());
  unpack(qkv, Part::key, k_.data());
  unpack(qkv, Part::value, v_.data());
  float* probs = shape_.fused ? probabilities_.data() : kept;
  scores_.run(q_.data(), k_.data(), probs);
  masked_softmax(probs, shape_.fused ? kept : nullptr);
  context_out_.run(probs, v_.data(), o_.data());
  // y is [head][head_dim] per query position: the dense heads written back row by row.
  const auto& s = shape_;
  const int64_t rows = s.query_rows();
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t t = 0; t < rows; ++t)
      for (int64_t h = 0; h < s.heads; ++h) {
        const float* from = o_.data() + ((n * s.heads + h) * rows + t) * s.head_dim;
        std::copy(from, from + s.head_dim, y + ((n * rows + t) * s.heads + h) * s.head_dim);
      }
}

void SelfAttentionKernel::backward(const float* qkv, const float* kept, const float* dy, float* dqkv) {
  // The rotated q and k again, from the positions: nothing but the input and P (or L) was kept.
  unpack(qkv, Part::query, q_.data());
  unpack(qkv, Part::key, k_.data());
  unpack(qkv, Part::value, v_.data());
  const float* probs = kept;
  if (shape_.fused) {  // S = scale Q K^T again, then P = exp(S - L)
    scores_.run(q_.data(), k_.data(), probabilities_.data());
    probabilities_from_statistics(probabilities_.data(), kept);
    probs = probabilities_.data();
  }
  const auto& s = shape_;
  const int64_t rows = s.query_rows();
  for (int64_t n = 0; n < s.batch; ++n)  // o_ holds dO here
    for (int64_t t = 0; t < rows; ++t)
      for (int64_t h = 0; h < s.heads; ++h) {
        const float* from = dy + ((n * rows + t) * s.heads + h) * s.head_dim;
        std::copy(from, from + s.head_dim, o_.data() + ((n * s.heads + h) * rows + t) * s.head_dim);
      }
  grad_v_.run(probs, o_.data(), dv_.data());
  grad_p_.run(o_.data(), v_.data(), grad_scores_.data());
  softmax_backward(probs, grad_scores_.data());
  grad_q_.run(grad_scores_.data(), k_.data(), dq_.data());
  grad_k_.run(grad_scores_.data(), q_.data(), dk_.data());
  // The three parts together overwrite all of dqkv.
  pack_gradient(dq_.data(), Part::query, dqkv);
  pack_gradient(dk_.data(), Part::key, dqkv);
  pack_gradient(dv_.data(), Part::value, dqkv);
}

std::unique_ptr<kernels::SelfAttentionKernel> make_self_attention(CpuContext& context,
                                                                  const kernels::AttentionShape& shape) {
  return std::make_unique<SelfAttentionKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
