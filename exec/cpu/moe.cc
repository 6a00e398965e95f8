// The mixture-of-experts MLP (exec/kernels/moe.h) on the CPU. The routed rows are gathered into
// one matrix grouped by expert, so each expert's three projections are plain GEMMs (dnnl_sgemm,
// whose sizes may change from call to call, unlike a primitive's: how many rows an expert gets
// depends on the data) and SwiGLU runs once over all routed rows (cpu/swiglu.cc's kernel). The
// router's softmax and the weights' renormalisation are taken in double.
//
// The gathered rows, their SwiGLU products and gradients are working memory of one call, freed
// when it returns (as a primitive's scratchpad); what lives from forward to backward is only the
// caller's kept buffer.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/moe.h"

namespace splitbrain::exec::cpu {
namespace {

using Index = dnnl_dim_t;

// Row-major C [m x n] = op(A) op(B) + beta C, with lda, ldb, ldc the stored matrices' row
// strides. An expert that got no tokens gives m or k = 0: nothing to do (a sum over no rows
// adds nothing).
void gemm(char transpose_a, char transpose_b, Index m, Index n, Index k, const float* a, Index lda, const float* b,
          Index ldb, float beta, float* c, Index ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  // dnnl::sgemm reports failure in its status rather than by throwing.
  const dnnl::status status = dnnl::sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl::status::success) {
    throw kernels::KernelArgumentError("MoeKernel: dnnl_sgemm failed with status " +
                                       std::to_string(static_cast<int>(status)));
  }
}

// Which token each routed row is, its weight, and where each expert's rows start: rows grouped
// by expert, within an expert by token (the kept gate and up are in this order).
struct Routing {
  std::vector<Index> token_of_row;
  std::vector<Index> expert_of_row;
  std::vector<double> weight_of_row;
  std::vector<Index> first_row_of_expert;  // experts + 1 entries
};

Routing route(const kernels::MoeShape& s, const float* probabilities) {
  std::vector<std::vector<Index>> tokens_of_expert(static_cast<size_t>(s.experts));
  std::vector<std::vector<double>> weights_of_expert(static_cast<size_t>(s.experts));
  std::vector<int64_t> chosen(static_cast<size_t>(s.top_k));
  for (Index t = 0; t < s.tokens; ++t) {
    const float* p = probabilities + t * s.experts;
    kernels::choose_top_experts(p, s.experts, s.top_k, chosen.data());
    double kept_sum = 0.0;
    for (const int64_t e : chosen) kept_sum += p[e];
    for (const int64_t e : chosen) {
      tokens_of_expert[static_cast<size_t>(e)].push_back(t);
      weights_of_expert[static_cast<size_t>(e)].push_back(p[e] / kept_sum);
    }
  }
  Routing r;
  r.first_row_of_expert.push_back(0);
  for (Index e = 0; e < s.experts; ++e) {
    const auto& tokens = tokens_of_expert[static_cast<size_t>(e)];
    r.token_of_row.insert(r.token_of_row.end(), tokens.begin(), tokens.end());
    r.expert_of_row.insert(r.expert_of_row.end(), tokens.size(), e);
    const auto& weights = weights_of_expert[static_cast<size_t>(e)];
    r.weight_of_row.insert(r.weight_of_row.end(), weights.begin(), weights.end());
    r.first_row_of_expert.push_back(static_cast<Index>(r.token_of_row.size()));
  }
  return r;
}

// rows[r] = source[token_of_row[r]], each row `width` floats.
std::vector<float> gather_rows(const Routing& routing, const float* source, Index width) {
  std::vector<float> rows(routing.token_of_row.size() * static_cast<size_t>(width));
  for (size_t r = 0; r < routing.token_of_row.size(); ++r) {
    std::memcpy(rows.data() + r * static_cast<size_t>(width), source + routing.token_of_row[r] * width,
                static_cast<size_t>(width) * sizeof(float));
  }
  return rows;
}

class MoeKernel final : public kernels::MoeKernel {
 public:
  MoeKernel(CpuContext& context, const kernels::MoeShape& shape)
      : shape_(kernels::checked(shape)),
        routed_rows_(kernels::moe_routed_rows(shape_)),
        swiglu_(make_swiglu(context, routed_rows_ * shape_.ffn)) {}
  const kernels::MoeShape& shape() const override { return shape_; }

  void forward(const float* x, const float* router, const float* w1, const float* w3, const float* w2, float* y,
               float* kept) override {
    const kernels::MoeShape& s = shape_;
    float* probabilities = kept;
    float* gate = kept + s.tokens * s.experts;
    float* up = gate + routed_rows_ * s.ffn;

    gemm('N', 'T', s.tokens, s.experts, s.features, x, s.features, router, s.features, 0.0f, probabilities,
         s.experts);  // the logits, turned into probabilities in place
    for (Index t = 0; t < s.tokens; ++t) softmax_in_place(probabilities + t * s.experts);
    const Routing routing = route(s, probabilities);

    const std::vector<float> x_rows = gather_rows(routing, x, s.features);
    for (Index e = 0; e < s.experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index rows = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      const float* xe = x_rows.data() + first * s.features;
      gemm('N', 'T', rows, s.ffn, s.features, xe, s.features, w1 + e * s.ffn * s.features, s.features, 0.0f,
           gate + first * s.ffn, s.ffn);
      gemm('N', 'T', rows, s.ffn, s.features, xe, s.features, w3 + e * s.ffn * s.features, s.features, 0.0f,
           up + first * s.ffn, s.ffn);
    }
    std::vector<float> hidden(static_cast<size_t>(routed_rows_ * s.ffn));
    swiglu_->forward(gate, up, hidden.data());

    std::vector<float> expert_out(static_cast<size_t>(routed_rows_ * s.features));
    for (Index e = 0; e < s.experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index rows = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      gemm('N', 'T', rows, s.features, s.ffn, hidden.data() + first * s.ffn, s.ffn, w2 + e * s.features * s.ffn, s.ffn,
           0.0f, expert_out.data() + first * s.features, s.features);
    }
    std::fill(y, y + s.tokens * s.features, 0.0f);
    for (Index r = 0; r < routed_rows_; ++r) {
      const float weight = static_cast<float>(routing.weight_of_row[static_cast<size_t>(r)]);
      float* out = y + routing.token_of_row[static_cast<size_t>(r)] * s.features;
      const float* row = expert_out.data() + r * s.features;
      for (Index f = 0; f < s.features; ++f) out[f] += weight * row[f];
    }
  }

  void backward(const float* x, const float* dy, const float* router, const float* w1, const float* w3, const float* w2,
                const float* kept, float* dx, float* d_router, float* d_w1, float* d_w3, float* d_w2) override {
    const kernels::MoeShape& s = shape_;
    const float* probabilities = kept;
    const float* gate = kept + s.tokens * s.experts;
    const float* up = gate + routed_rows_ * s.ffn;
    const Routing routing = route(s, probabilities);

    // g = dy W2_e per routed row, before its weight scales it; the weight's gradient is <g, h>.
    std::vector<float> dy_rows = gather_rows(routing, dy, s.features);
    std::vector<float> d_hidden(static_cast<size_t>(routed_rows_ * s.ffn));
    for (Index e = 0; e < s.experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index rows = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      gemm('N', 'N', rows, s.ffn, s.features, dy_rows.data() + first * s.features, s.features,
           w2 + e * s.features * s.ffn, s.ffn, 0.0f, d_hidden.data() + first * s.ffn, s.ffn);
    }
    std::vector<float> hidden(static_cast<size_t>(routed_rows_ * s.ffn));
    swiglu_->forward(gate, up, hidden.data());  // recomputed from the kept gate and up

    std::vector<double> d_weight_of_row(static_cast<size_t>(routed_rows_));
    for (Index r = 0; r < routed_rows_; ++r) {
      const float* g = d_hidden.data() + r * s.ffn;
      const float* h = hidden.data() + r * s.ffn;
      double dot = 0.0;
      for (Index i = 0; i < s.ffn; ++i) dot += static_cast<double>(g[i]) * h[i];
      d_weight_of_row[static_cast<size_t>(r)] = dot;
      // From here on the row's dy and g carry its weight: the expert's own gradients.
      const float weight = static_cast<float>(routing.weight_of_row[static_cast<size_t>(r)]);
      for (Index i = 0; i < s.ffn; ++i) d_hidden[static_cast<size_t>(r * s.ffn + i)] *= weight;
      for (Index f = 0; f < s.features; ++f) dy_rows[static_cast<size_t>(r * s.features + f)] *= weight;
    }

    std::vector<float> d_gate(static_cast<size_t>(routed_rows_ * s.ffn));
    std::vector<float> d_up(static_cast<size_t>(routed_rows_ * s.ffn));
    swiglu_->backward(gate, up, d_hidden.data(), d_gate.data(), d_up.data());
    const std::vector<float> x_rows = gather_rows(routing, x, s.features);
    std::vector<float> dx_rows(dx != nullptr ? static_cast<size_t>(routed_rows_ * s.features) : 0);
    for (Index e = 0; e < s.experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index rows = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      const float* xe = x_rows.data() + first * s.features;
      const float* dge = d_gate.data() + first * s.ffn;
      const float* due = d_up.data() + first * s.ffn;
      gemm('T', 'N', s.features, s.ffn, rows, dy_rows.data() + first * s.features, s.features,
           hidden.data() + first * s.ffn, s.ffn, 1.0f, d_w2 + e * s.features * s.ffn, s.ffn);
      gemm('T', 'N', s.ffn, s.features, rows, dge, s.ffn, xe, s.features, 1.0f, d_w1 + e * s.ffn * s.features,
           s.features);
      gemm('T', 'N', s.ffn, s.features, rows, due, s.ffn, xe, s.features, 1.0f, d_w3 + e * s.ffn * s.features,
           s.features);
      if (dx == nullptr) continue;
      float* dxe = dx_rows.data() + first * s.features;
      gemm('N', 'N', rows, s.features, s.ffn, dge, s.ffn, w1 + e * s.ffn * s.features, s.features, 0.0f, dxe,
           s.features);
      gemm('N', 'N', rows, s.features, s.ffn, due, s.ffn, w3 + e * s.ffn * s.features, s.features, 1.0f, dxe,
           s.features);
    }

    const std::vector<float> d_logits = router_logit_gradients(probabilities, routing, d_weight_of_row);
    gemm('T', 'N', s.experts, s.features, s.tokens, d_logits.data(), s.experts, x, s.features, 1.0f, d_router,
         s.features);
    if (dx == nullptr) return;
    gemm('N', 'N', s.tokens, s.features, s.experts, d_logits.data(), s.experts, router, s.features, 0.0f, dx,
         s.features);
    for (Index r = 0; r < routed_rows_; ++r) {
      float* out = dx + routing.token_of_row[static_cast<size_t>(r)] * s.features;
      const float* row = dx_rows.data() + r * s.features;
      for (Index f = 0; f < s.features; ++f) out[f] += row[f];
    }
  }

 private:
  void softmax_in_place(float* row) const {
    const float largest = *std::max_element(row, row + shape_.experts);
    double sum = 0.0;
    std::vector<double> exps(static_cast<size_t>(shape_.experts));
    for (Index e = 0; e < shape_.experts; ++e) {
      exps[static_cast<size_t>(e)] = std::exp(static_cast<double>(row[e]) - largest);
      sum += exps[static_cast<size_t>(e)];
    }
    for (Index e = 0; e < shape_.experts; ++e) row[e] = static_cast<float>(exps[static_cast<size_t>(e)] / sum);
  }

  // The logits' gradient [tokens, experts] from the kept weights' gradients dw. With S the sum of
  // a token's kept probabilities and w_j = p_j / S: dp_j = (dw_j - sum_i dw_i w_i) / S for a kept
  // expert, 0 for the others (they reach the output only through the choice, which has no
  // gradient); then the softmax's dlogit_e = p_e (dp_e - sum_j dp_j p_j).
  std::vector<float> router_logit_gradients(const float* probabilities, const Routing& routing,
                                            const std::vector<double>& d_weight_of_row) const {
    const kernels::MoeShape& s = shape_;
    std::vector<double> d_weight(static_cast<size_t>(s.tokens * s.experts), 0.0);
    std::vector<char> is_kept(static_cast<size_t>(s.tokens * s.experts), 0);
    std::vector<double> weighted_sum(static_cast<size_t>(s.tokens), 0.0);
    std::vector<double> kept_sum(static_cast<size_t>(s.tokens), 0.0);
    for (Index r = 0; r < routed_rows_; ++r) {
      const auto row = static_cast<size_t>(r);
      const Index t = routing.token_of_row[row];
      const Index e = routing.expert_of_row[row];
      d_weight[static_cast<size_t>(t * s.experts + e)] = d_weight_of_row[row];
      is_kept[static_cast<size_t>(t * s.experts + e)] = 1;
      weighted_sum[static_cast<size_t>(t)] += d_weight_of_row[row] * routing.weight_of_row[row];
      kept_sum[static_cast<size_t>(t)] += probabilities[t * s.experts + e];
    }
    std::vector<float> d_logits(static_cast<size_t>(s.tokens * s.experts), 0.0f);
    std::vector<double> d_probability(static_cast<size_t>(s.experts));
    for (Index t = 0; t < s.tokens; ++t) {
      const float* p = probabilities + t * s.experts;
      const auto token = static_cast<size_t>(t);
      double p_dot_dp = 0.0;
      for (Index e = 0; e < s.experts; ++e) {
        const auto at = static_cast<size_t>(t * s.experts + e);
        d_probability[static_cast<size_t>(e)] =
            is_kept[at] != 0 ? (d_weight[at] - weighted_sum[token]) / kept_sum[token] : 0.0;
        p_dot_dp += d_probability[static_cast<size_t>(e)] * p[e];
      }
      for (Index e = 0; e < s.experts; ++e) {
        d_logits[static_cast<size_t>(t * s.experts + e)] =
            static_cast<float>(p[e] * (d_probability[static_cast<size_t>(e)] - p_dot_dp));
      }
    }
    return d_logits;
  }

  kernels::MoeShape shape_;
  Index routed_rows_;
  std::unique_ptr<kernels::SwigluKernel> swiglu_;
};

}  // namespace

std::unique_ptr<kernels::MoeKernel> make_moe(CpuContext& context, const kernels::MoeShape& shape) {
  return std::make_unique<MoeKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
