#pragma once
// A sparse mixture-of-experts MLP (model/op.h MoeAttrs; Hugging Face's MixtralSparseMoeBlock) on a
// local [tokens, features] fp32 tensor x:
//   p = softmax(x R^T) over the experts (R [experts, features], the router, no bias);
//   each token keeps its top_k experts (largest p first, the lower expert on a tie) with weights
//   w_j = p_j / sum of its kept p;
//   y = sum over its kept experts e of w_e * (silu(x W1_e^T) * (x W3_e^T)) W2_e^T,
// with W1_e, W3_e [ffn, features] and W2_e [features, ffn], the experts stacked along a leading
// dimension (plans/op_rules/moe.cc's parameter order: R, W1, W3, W2).
//
// A rank may hold only some experts (expert parallelism: held_experts from first_expert, the
// weights W1, W3, W2 then being those experts' only): it still routes every token over all the
// experts with the whole router, but computes only the rows routed to its experts, so y is its
// share of a sum over the ranks holding the others. Every routed token is computed (no capacity:
// what Mixtral trains with).
//
// Backward comes in two parts, so that the ranks sharing the experts can sum between them what
// couples the experts (the renormalisation): backward_experts gives each held expert's gradients
// and each kept routing weight's gradient dL/dw = <dy, expert output>; backward_router takes the
// routing weights' gradients of all experts and gives the router's.
//
// What forward keeps for backward, in a caller buffer of moe_kept_elements floats
// (model/ops/moe.cc's saved extra elements): the router probabilities [tokens, experts], from
// which backward takes the same choice again, then each routed row's gate (x W1_e^T) and up
// (x W3_e^T), room for [tokens * top_k, ffn] each (all of it used when every expert is held), the
// rows grouped by expert and within an expert by token, from which silu and the SwiGLU product
// are recomputed. x is the layer's saved input. C++17, as the CUDA backend's .cu files include it.

#include <cstdint>
#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

struct MoeShape {
  int64_t tokens = 1;  // local rows of x (samples x positions)
  int64_t features = 1;
  int64_t experts = 1;
  int64_t top_k = 1;
  int64_t ffn = 1;
  int64_t first_expert = 0;  // the experts this rank holds: [first_expert, first_expert + held_experts)
  int64_t held_experts = 1;
};

// The shape, or KernelArgumentError naming the field every backend refuses.
inline const MoeShape& checked(const MoeShape& s) {
  if (!(s.tokens > 0 && s.features > 0 && s.experts > 0 && s.ffn > 0))
    throw KernelArgumentError("MoeKernel: tokens " + std::to_string(s.tokens) + ", features " +
                              std::to_string(s.features) + ", experts " + std::to_string(s.experts) + " and ffn " +
                              std::to_string(s.ffn) + " must be positive");
  if (s.top_k < 1 || s.top_k > s.experts)
    throw KernelArgumentError("MoeKernel: top_k " + std::to_string(s.top_k) + " must be from 1 to the " +
                              std::to_string(s.experts) + " experts");
  if (s.first_expert < 0 || s.held_experts < 1 || s.first_expert + s.held_experts > s.experts)
    throw KernelArgumentError("MoeKernel: held experts [" + std::to_string(s.first_expert) + ", " +
                              std::to_string(s.first_expert + s.held_experts) + ") must lie within the " +
                              std::to_string(s.experts) + " experts");
  return s;
}

// Routed rows when every expert is held: every token's top_k experts (the most a rank computes).
inline int64_t moe_routed_rows(const MoeShape& s) { return s.tokens * s.top_k; }

// Floats forward keeps: the probabilities, then room for the routed rows' gate, then their up.
inline int64_t moe_kept_elements(const MoeShape& s) { return s.tokens * s.experts + 2 * moe_routed_rows(s) * s.ffn; }

// The top_k experts of one token from its probabilities, largest first, the lower expert first
// on a tie, written to chosen[0..top_k). Every backend chooses by this rule, forward and backward.
inline void choose_top_experts(const float* probabilities, int64_t experts, int64_t top_k, int64_t* chosen) {
  for (int64_t j = 0; j < top_k; ++j) {
    int64_t best = -1;
    for (int64_t e = 0; e < experts; ++e) {
      bool taken = false;
      for (int64_t i = 0; i < j; ++i) taken = taken || chosen[i] == e;
      if (taken) continue;
      if (best < 0 || probabilities[e] > probabilities[best]) best = e;
    }
    chosen[j] = best;
  }
}

class MoeKernel {
 public:
  virtual ~MoeKernel() = default;
  virtual const MoeShape& shape() const = 0;

  // y (overwritten) from x, the router and the held experts' weights; writes `kept`
  // (moe_kept_elements floats).
  virtual void forward(const float* x, const float* router, const float* w1, const float* w3, const float* w2, float* y,
                       float* kept) = 0;
  // From x, dy and what forward kept: the held experts' share of dx (overwritten; null when no
  // input gradient is wanted), their weights' gradients ADDED into d_w1, d_w3, d_w2 so
  // micro-batches accumulate, and d_routing_weights [tokens, experts] overwritten: dL/dw of each
  // kept weight of a held expert, 0 everywhere else.
  virtual void backward_experts(const float* x, const float* dy, const float* w1, const float* w3, const float* w2,
                                const float* kept, float* dx, float* d_w1, float* d_w3, float* d_w2,
                                float* d_routing_weights) = 0;
  // From the routing weights' gradients of every expert (summed over the ranks holding them): the
  // router's gradient ADDED into d_router, and its share of dx ADDED into dx (null: none wanted,
  // or another rank adds it).
  virtual void backward_router(const float* x, const float* router, const float* kept, const float* d_routing_weights,
                               float* dx, float* d_router) = 0;
};

}  // namespace splitbrain::exec::kernels
