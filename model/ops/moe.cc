// moe: a sparse mixture-of-experts MLP (Mixtral's block, Hugging Face's MixtralSparseMoeBlock) on
// x [T, D]. The router x W_router (D x E, no bias) gives each token a softmax over the E experts;
// its top_k probabilities are kept and renormalised to sum to 1, and the output is the sum over
// those experts of weight * w2(silu(x w1) * (x w3)), each expert a bias-free SwiGLU MLP ffn wide.
//
// The cost assumes balanced routing: each expert gets T top_k / E of the tokens. With a capacity
// (capacity_factor > 0) an expert computes at most ceil(capacity_factor T top_k / E) of them and
// drops the rest (they get nothing from that expert), so the routed rows computed are
// min(T top_k, E x capacity).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

// Routing, per router probability (T x E of them), counting exp and a division as one FLOP each:
// the softmax is 5 (the convention of model/layer_cost.cc) and keeping the top_k takes top_k
// comparisons; each kept weight is renormalised by a sum and a division (2). Backward: the
// softmax's p (g - sum(g p)) is 4 a probability, the renormalisation's 4 a kept weight.
constexpr double kSoftmaxPerProbability = 5, kRenormalisePerKeptWeight = 2;
constexpr double kSoftmaxBackwardPerProbability = 4, kRenormaliseBackwardPerKeptWeight = 4;
// Each expert's SwiGLU between its gate and up projections, per element of a routed row of ffn
// (ops/swiglu.cc's counts: 5 forward, 11 backward with silu recomputed).
constexpr double kSwigluForwardPerElement = 5, kSwigluBackwardPerElement = 11;
// The gradient of a routing weight w is <g, h> with g = W2^T dy (the down projection's input
// gradient before it is scaled by w) and h = silu(gate) * up, recomputed from the kept gate and up
// (1 a hidden element), so the experts' outputs need not be kept; g scaled by w is 1 more: 4.
constexpr double kRoutingWeightGradientPerHidden = 4;
// Combining: every routed row scaled by its weight and added into its token's output (2 an
// element); in backward each token's input gradient sums its routed rows' (1 an element).
constexpr double kCombinePerElement = 2, kGatherGradientPerElement = 1;

OpAttrs read(JsonObjectReader& fields) {
  MoeAttrs a;
  a.experts = fields.required_int("experts");
  a.top_k = fields.required_int("top_k");
  a.ffn = fields.required_int("ffn");
  a.capacity_factor = fields.optional_number("capacity_factor", 0.0);
  return a;
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<MoeAttrs>(attrs);
  out["experts"] = a.experts;
  out["top_k"] = a.top_k;
  out["ffn"] = a.ffn;
  out["capacity_factor"] = a.capacity_factor;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<MoeAttrs>();
  require_positive(site, "experts", a.experts);
  if (a.top_k < 1 || a.top_k > a.experts) {
    site.fail("top_k", fmt::format("must be from 1 to the {} experts, got {}", a.experts, a.top_k));
  }
  require_positive(site, "ffn", a.ffn);
  if (!std::isfinite(a.capacity_factor) || a.capacity_factor < 0.0) {
    site.fail("capacity_factor", fmt::format("must be 0 (no capacity limit) or positive, got {}", a.capacity_factor));
  }
  const Layer& x = *producers[0];
  require_values(site, x);
  if (x.output_shape.size() != 2) {
    site.fail("inputs", fmt::format("needs a [T, D] input per sample (positions, features), but '{}' gives {}", x.name,
                                    shape_to_string(x.output_shape)));
  }
  layer.output_shape = x.output_shape;
}

// The routed rows the experts compute for T tokens: T top_k, or E x capacity when that is less
// (a count that fits in 64 bits, checked, so the saved elements below can be counted in them).
int64_t routed_rows(const MoeAttrs& a, int64_t tokens) {
  const int64_t routed = checked_product(tokens, a.top_k, "routed rows");
  if (a.capacity_factor <= 0.0) return routed;
  const double capacity = std::ceil(a.capacity_factor * static_cast<double>(routed) / static_cast<double>(a.experts));
  const double capped = static_cast<double>(a.experts) * capacity;
  return capped < static_cast<double>(routed) ? static_cast<int64_t>(capped) : routed;
}

void cost(const Layer& layer, std::span<const Layer* const>, LayerCost& out) {
  const auto& a = layer.attr<MoeAttrs>();
  const int64_t features = layer.output_shape.back();
  const double tokens = static_cast<double>(layer.output_shape.front());
  const double d = static_cast<double>(features);
  const double e = static_cast<double>(a.experts);
  const double ffn = static_cast<double>(a.ffn);
  const double kept = tokens * static_cast<double>(a.top_k);  // routing weights, dropped or not
  const int64_t routed = routed_rows(a, layer.output_shape.front());
  const double rows = static_cast<double>(routed);

  const int64_t expert_params = checked_product(checked_product(3, features, "parameters"), a.ffn, "parameters");
  out.params = checked_sum(checked_product(features, a.experts, "parameters"),
                           checked_product(a.experts, expert_params, "parameters"), "parameters");

  const double router_macs = tokens * d * e;
  const double expert_macs = rows * 3.0 * d * ffn;  // w1, w3 and w2 on every routed row
  out.forward_flops = 2 * router_macs + tokens * e * (kSoftmaxPerProbability + static_cast<double>(a.top_k)) +
                      kept * kRenormalisePerKeptWeight + 2 * expert_macs + rows * ffn * kSwigluForwardPerElement +
                      rows * d * kCombinePerElement;
  // Backward does twice the products: each one's input gradient and its weight gradient. The
  // chain from dy back to the experts' gate and up and to the router's logits feeds the weight
  // gradients whatever happens upstream, so it is counted there (a layer whose input needs no
  // gradient still pays it); the input gradient is the products into x (the router's, w1's and
  // w3's) and the sum of each token's routed rows.
  out.backward_input_flops = 2 * router_macs + 2 * (rows * 2.0 * d * ffn) + rows * d * kGatherGradientPerElement;
  out.backward_weight_flops = 2 * router_macs + 2 * expert_macs + 2 * (rows * d * ffn) +
                              rows * ffn * (kSwigluBackwardPerElement + kRoutingWeightGradientPerHidden) +
                              tokens * e * kSoftmaxBackwardPerProbability + kept * kRenormaliseBackwardPerKeptWeight;
  // Backward reads x (the router's and the experts' weight gradients), the router's
  // probabilities (the top_k choice is taken again from them) and each routed row's gate and up
  // (silu and h recomputed from them), as linear and swiglu keep their inputs.
  out.saved.inputs = {0};
  const int64_t probabilities = checked_product(layer.output_shape.front(), a.experts, "saved elements");
  const int64_t gate_and_up = checked_product(checked_product(routed, 2, "saved elements"), a.ffn, "saved elements");
  out.saved.extra_elements = checked_sum(probabilities, gate_and_up, "saved elements");
}

// PyTorch's default for each bias-free linear: uniform in +-1/sqrt(in_features). Parameter 0 is
// the router and 1-3 the experts' stacked w1, w3 (input D) and w2 (input ffn), in the order of
// plans/op_rules/moe.cc.
ParameterInit init(const Layer& layer, int parameter) {
  constexpr int kDownProjection = 3;
  const double in_features = parameter == kDownProjection ? static_cast<double>(layer.attr<MoeAttrs>().ffn)
                                                          : static_cast<double>(layer.output_shape.back());
  return {.uniform_bound = 1.0 / std::sqrt(in_features)};
}

}  // namespace

const OpUnit moe_unit = {
    .kind = OpKind::moe,
    .name = "moe",
    .default_attrs = []() -> OpAttrs { return MoeAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .arithmetic = ArithmeticPattern::matrix_product,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
