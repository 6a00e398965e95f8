// The mixture-of-experts MLP (exec/kernels/moe.h) on the CPU. The rows routed to the held experts
// are gathered into one matrix grouped by expert, so each expert's three projections are plain GEMMs (dnnl_sgemm,
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

// Which token each row routed to a held expert is, its expert (of all), its weight, and where
// each held expert's rows start: rows grouped by expert, within an expert by token (the kept gate
// and up are in this order).
struct Routing {
  std::vector<Index> token_of_row;
  std::vector<Index> expert_of_row;
  std::vector<double> weight_of_row;
  std::vector<Index> first_row_of_expert;  // held experts + 1 entries
};

// Each token's kept experts and their renormalised weights, top_k a token, over all the experts.
void choose(const kernels::MoeShape& s, const float* probabilities, std::vector<int64_t>& chosen,
            std::vector<double>& weights) {
  chosen.resize(static_cast<size_t>(s.tokens * s.top_k));
  weights.resize(chosen.size());
  for (Index t = 0; t < s.tokens; ++t) {
    const float* p = probabilities + t * s.experts;
    int64_t* picked = chosen.data() + t * s.top_k;
    kernels::choose_top_experts(p, s.experts, s.top_k, picked);
    double kept_sum = 0.0;
    for (Index j = 0; j < s.top_k; ++j) kept_sum += p[picked[j]];
    for (Index j = 0; j < s.top_k; ++j) weights[static_cast<size_t>(t * s.top_k + j)] = p[picked[j]] / kept_sum;
  }
}

Routing route(const kernels::MoeShape& s, const float* probabilities) {
  std::vector<int64_t> chosen;
  std::vector<double> weights;
  choose(s, probabilities, chosen, weights);
  std::vector<std::vector<Index>> tokens_of_expert(static_cast<size_t>(s.held_experts));
  std::vector<std::vector<double>> weights_of_expert(static_cast<size_t>(s.held_experts));
  for (size_t k = 0; k < chosen.size(); ++k) {
    const int64_t held = chosen[k] - s.first_expert;
    if (held < 0 || held >= s.held_experts) continue;  // another rank's expert
    tokens_of_expert[static_cast<size_t>(held)].push_back(static_cast<Index>(k) / s.top_k);
    weights_of_expert[static_cast<size_t>(held)].push_back(weights[k]);
  }
  Routing r;
  r.first_row_of_expert.push_back(0);
  for (Index e = 0; e < s.held_experts; ++e) {
    const auto& tokens = tokens_of_expert[static_cast<size_t>(e)];
    r.token_of_row.insert(r.token_of_row.end(), tokens.begin(), tokens.end());
    r.expert_of_row.insert(r.expert_of_row.end(), tokens.size(), s.first_expert + e);
    const auto& expert_weights = weights_of_expert[static_cast<size_t>(e)];
    r.weight_of_row.insert(r.weight_of_row.end(), expert_weights.begin(), expert_weights.end());
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
  MoeKernel(CpuContext& context, const kernels::MoeShape& shape) : context_(context), shape_(kernels::checked(shape)) {}
  const kernels::MoeShape& shape() const override { return shape_; }

  void forward(const float* x, const float* router, const float* w1, const float* w3, const float* w2, float* y,
               float* kept) override {
    const kernels::MoeShape& s = shape_;
    float* probabilities = kept;
    float* gate = kept + s.tokens * s.experts;
    float* up = gate + kernels::moe_routed_rows(s) * s.ffn;

    gemm('N', 'T', s.tokens, s.experts, s.features, x, s.features, router, s.features, 0.0f, probabilities,
         s.experts);  // the logits, turned into probabilities in place
    for (Index t = 0; t < s.tokens; ++t) softmax_in_place(probabilities + t * s.experts);
    const Routing routing = route(s, probabilities);
    const Index rows = static_cast<Index>(routing.token_of_row.size());

    std::fill(y, y + s.tokens * s.features, 0.0f);
    if (rows == 0) return;  // no token chose a held expert: this rank's share is 0
    const std::vector<float> x_rows = gather_rows(routing, x, s.features);
    for (Index e = 0; e < s.held_experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index count = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      const float* xe = x_rows.data() + first * s.features;
      gemm('N', 'T', count, s.ffn, s.features, xe, s.features, w1 + e * s.ffn * s.features, s.features, 0.0f,
           gate + first * s.ffn, s.ffn);
      gemm('N', 'T', count, s.ffn, s.features, xe, s.features, w3 + e * s.ffn * s.features, s.features, 0.0f,
           up + first * s.ffn, s.ffn);
    }
    std::vector<float> hidden(static_cast<size_t>(rows * s.ffn));
    make_swiglu(context_, rows * s.ffn)->forward(gate, up, hidden.data());

    std::vector<float> expert_out(static_cast<size_t>(rows * s.features));
    for (Index e = 0; e < s.held_experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index count = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      gemm('N', 'T', count, s.features, s.ffn, hidden.data() + first * s.ffn, s.ffn, w2 + e * s.features * s.ffn, s.ffn,
           0.0f, expert_out.data() + first * s.features, s.features);
    }
    for (Index r = 0; r < rows; ++r) {
      const float weight = static_cast<float>(routing.weight_of_row[static_cast<size_t>(r)]);
      float* out = y + routing.token_of_row[static_cast<size_t>(r)] * s.features;
      const float* row = expert_out.data() + r * s.features;
      for (Index f = 0; f < s.features; ++f) out[f] += weight * row[f];
    }
  }

  void backward_experts(const float* x, const float* dy, const float* w1, const float* w3, const float* w2,
                        const float* kept, float* dx, float* d_w1, float* d_w3, float* d_w2,
                        float* d_routing_weights) override {
    const kernels::MoeShape& s = shape_;
    const float* probabilities = kept;
    const float* gate = kept + s.tokens * s.experts;
    const float* up = gate + kernels::moe_routed_rows(s) * s.ffn;
    const Routing routing = route(s, probabilities);
    const Index rows = static_cast<Index>(routing.token_of_row.size());
    std::fill(d_routing_weights, d_routing_weights + s.tokens * s.experts, 0.0f);
    if (dx != nullptr) std::fill(dx, dx + s.tokens * s.features, 0.0f);
    if (rows == 0) return;

    // g = dy W2_e per routed row, before its weight scales it; the weight's gradient is <g, h>.
    std::vector<float> dy_rows = gather_rows(routing, dy, s.features);
    std::vector<float> d_hidden(static_cast<size_t>(rows * s.ffn));
    for (Index e = 0; e < s.held_experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index count = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      gemm('N', 'N', count, s.ffn, s.features, dy_rows.data() + first * s.features, s.features,
           w2 + e * s.features * s.ffn, s.ffn, 0.0f, d_hidden.data() + first * s.ffn, s.ffn);
    }
    const std::unique_ptr<kernels::SwigluKernel> swiglu = make_swiglu(context_, rows * s.ffn);
    std::vector<float> hidden(static_cast<size_t>(rows * s.ffn));
    swiglu->forward(gate, up, hidden.data());  // recomputed from the kept gate and up

    for (Index r = 0; r < rows; ++r) {
      const auto row = static_cast<size_t>(r);
      const float* g = d_hidden.data() + r * s.ffn;
      const float* h = hidden.data() + r * s.ffn;
      double dot = 0.0;
      for (Index i = 0; i < s.ffn; ++i) dot += static_cast<double>(g[i]) * h[i];
      d_routing_weights[routing.token_of_row[row] * s.experts + routing.expert_of_row[row]] = static_cast<float>(dot);
      // From here on the row's dy and g carry its weight: the expert's own gradients.
      const float weight = static_cast<float>(routing.weight_of_row[row]);
      for (Index i = 0; i < s.ffn; ++i) d_hidden[static_cast<size_t>(r * s.ffn + i)] *= weight;
      for (Index f = 0; f < s.features; ++f) dy_rows[static_cast<size_t>(r * s.features + f)] *= weight;
    }

    std::vector<float> d_gate(static_cast<size_t>(rows * s.ffn));
    std::vector<float> d_up(static_cast<size_t>(rows * s.ffn));
    swiglu->backward(gate, up, d_hidden.data(), d_gate.data(), d_up.data());
    const std::vector<float> x_rows = gather_rows(routing, x, s.features);
    std::vector<float> dx_rows(dx != nullptr ? static_cast<size_t>(rows * s.features) : 0);
    for (Index e = 0; e < s.held_experts; ++e) {
      const Index first = routing.first_row_of_expert[static_cast<size_t>(e)];
      const Index count = routing.first_row_of_expert[static_cast<size_t>(e) + 1] - first;
      const float* xe = x_rows.data() + first * s.features;
      const float* dge = d_gate.data() + first * s.ffn;
      const float* due = d_up.data() + first * s.ffn;
      gemm('T', 'N', s.features, s.ffn, count, dy_rows.data() + first * s.features, s.features,
           hidden.data() + first * s.ffn, s.ffn, 1.0f, d_w2 + e * s.features * s.ffn, s.ffn);
      gemm('T', 'N', s.ffn, s.features, count, dge, s.ffn, xe, s.features, 1.0f, d_w1 + e * s.ffn * s.features,
           s.features);
      gemm('T', 'N', s.ffn, s.features, count, due, s.ffn, xe, s.features, 1.0f, d_w3 + e * s.ffn * s.features,
           s.features);
      if (dx == nullptr) continue;
      float* dxe = dx_rows.data() + first * s.features;
      gemm('N', 'N', count, s.features, s.ffn, dge, s.ffn, w1 + e * s.ffn * s.features, s.features, 0.0f, dxe,
           s.features);
      gemm('N', 'N', count, s.features, s.ffn, due, s.ffn, w3 + e * s.ffn * s.features, s.features, 1.0f, dxe,
           s.features);
    }
    if (dx == nullptr) return;
    for (Index r = 0; r < rows; ++r) {
      float* out = dx + routing.token_of_row[static_cast<size_t>(r)] * s.features;
      const float* row = dx_rows.data() + r * s.features;
      for (Index f = 0; f < s.features; ++f) out[f] += row[f];
    }
  }

  void backward_router(const float* x, const float* router, const float* kept, const float* d_routing_weights,
                       float* dx, float* d_router) override {
    const kernels::MoeShape& s = shape_;
    const std::vector<float> d_logits = router_logit_gradients(kept, d_routing_weights);
    gemm('T', 'N', s.experts, s.features, s.tokens, d_logits.data(), s.experts, x, s.features, 1.0f, d_router,
         s.features);
    if (dx == nullptr) return;
    gemm('N', 'N', s.tokens, s.features, s.experts, d_logits.data(), s.experts, router, s.features, 1.0f, dx,
         s.features);
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
  std::vector<float> router_logit_gradients(const float* probabilities, const float* d_routing_weights) const {
    const kernels::MoeShape& s = shape_;
    std::vector<int64_t> chosen;
    std::vector<double> weights;
    choose(s, probabilities, chosen, weights);
    std::vector<float> d_logits(static_cast<size_t>(s.tokens * s.experts), 0.0f);
    std::vector<double> d_probability(static_cast<size_t>(s.experts));
    for (Index t = 0; t < s.tokens; ++t) {
      const float* p = probabilities + t * s.experts;
      const float* dw = d_routing_weights + t * s.experts;
      const int64_t* picked = chosen.data() + t * s.top_k;
      double kept_sum = 0.0, weighted_sum = 0.0;
      for (Index j = 0; j < s.top_k; ++j) {
        kept_sum += p[picked[j]];
        weighted_sum += static_cast<double>(dw[picked[j]]) * weights[static_cast<size_t>(t * s.top_k + j)];
      }
      std::fill(d_probability.begin(), d_probability.end(), 0.0);
      for (Index j = 0; j < s.top_k; ++j) {
        d_probability[static_cast<size_t>(picked[j])] = (static_cast<double>(dw[picked[j]]) - weighted_sum) / kept_sum;
      }
      double p_dot_dp = 0.0;
      for (Index e = 0; e < s.experts; ++e) p_dot_dp += d_probability[static_cast<size_t>(e)] * p[e];
      for (Index e = 0; e < s.experts; ++e) {
        d_logits[static_cast<size_t>(t * s.experts + e)] =
            static_cast<float>(p[e] * (d_probability[static_cast<size_t>(e)] - p_dot_dp));
      }
    }
    return d_logits;
  }

  CpuContext& context_;
  kernels::MoeShape shape_;
};

}  // namespace

std::unique_ptr<kernels::MoeKernel> make_moe(CpuContext& context, const kernels::MoeShape& shape) {
  return std::make_unique<MoeKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
