// self_attention: scaled dot-product attention on a fused q|k|v input, multi-head or
// grouped-query (kv_heads), with optional rotary positions (rope_theta); the layout and the
// rotation convention are documented at SelfAttentionAttrs (model/op.h). It gives
// [T, heads * head_dim]; the projections around it are ordinary linear layers.

#include <fmt/format.h>

#include <cmath>

#include "model/attention_kept.h"
#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

constexpr double kSoftmaxForward = 5, kSoftmaxBackward = 4;  // max, subtract, exp, sum, divide
// Rotary positions, per rotated element of q and k: x cos + rotate_half(x) sin is two multiplies
// and an add. Backward recomputes the rotated q and k from the positions (3) and turns their
// gradients back by the opposite angle (3). The T x head_dim/2 sines and cosines are left out,
// as the norms' square roots are.
constexpr double kRopeForwardPerElement = 3, kRopeBackwardPerElement = 6;
// Fused attention's backward makes each probability again from its score and its row's kept
// log-sum-exp L: the 1/sqrt(d) scale, s - L and exp (one more Q K^T product besides). The log
// forward takes per row to form L is left out, as the norms' square roots are.
constexpr double kRecomputedProbabilityPerScore = 3;

OpAttrs read(JsonObjectReader& fields) {
  SelfAttentionAttrs a{fields.required_int("heads"), fields.optional_bool("causal", true),
                       fields.optional_number("dropout", 0.0)};
  a.kv_heads = fields.optional_int("kv_heads", 0);
  a.rope_theta = fields.optional_number("rope_theta", 0.0);
  a.fused = fields.optional_bool("fused", false);
  return a;
}

// kv_heads, rope_theta and fused only when set, so files of multi-head attention read as before.
void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<SelfAttentionAttrs>(attrs);
  out["heads"] = a.heads;
  out["causal"] = a.causal;
  if (a.dropout > 0.0) out["dropout"] = a.dropout;
  if (a.kv_heads > 0) out["kv_heads"] = a.kv_heads;
  if (a.rope_theta > 0.0) out["rope_theta"] = a.rope_theta;
  if (a.fused) out["fused"] = true;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<SelfAttentionAttrs>();
  require_values(site, *producers[0]);
  const Shape& in = producers[0]->output_shape;
  require_positive(site, "heads", a.heads);
  if (a.kv_heads < 0)
    site.fail("kv_heads", fmt::format("must be positive (or 0: as many as heads), got {}", a.kv_heads));
  const int64_t kv_heads = a.kv_head_count();
  if (a.heads % kv_heads != 0) {
    site.fail("kv_heads",
              fmt::format("{} key/value heads do not divide the {} heads into equal groups", kv_heads, a.heads));
  }
  if (!(a.dropout >= 0.0 && a.dropout < 1.0)) site.fail("dropout", fmt::format("must be in [0, 1), got {}", a.dropout));
  if (a.fused && a.dropout > 0.0) {
    site.fail("dropout", fmt::format("fused attention keeps no probabilities to drop out (dropout {}); set dropout "
                                     "to 0 or fused to false",
                                     a.dropout));
  }
  if (!(a.rope_theta >= 0.0 && std::isfinite(a.rope_theta))) {
    site.fail("rope_theta", fmt::format("must be a finite base > 0 (or 0: no rotary positions), got {}", a.rope_theta));
  }
  const int64_t columns_per_dim = a.heads + 2 * kv_heads;  // query heads, then a k and a v per kv head
  if (in.size() != 2 || in[1] % columns_per_dim != 0) {
    site.fail("inputs", fmt::format("needs a fused q|k|v input [T, (heads {} + 2 x kv_heads {}) x head_dim], got {}",
                                    a.heads, kv_heads, shape_to_string(in)));
  }
  const int64_t head_dim = in[1] / columns_per_dim;
  if (a.rope_theta > 0.0 && head_dim % 2 != 0) {
    site.fail("rope_theta",
              fmt::format("rotary positions pair the halves of each head, but head_dim {} is odd", head_dim));
  }
  layer.output_shape = {in[0], a.heads * head_dim};
}

void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  const auto& a = layer.attr<SelfAttentionAttrs>();
  const Shape& in_shape = producers[0]->output_shape;
  const double tokens = static_cast<double>(in_shape[0]);
  const double hidden = static_cast<double>(layer.output_shape.back());  // heads * head_dim
  const double scores = static_cast<double>(a.heads) * tokens * tokens;
  // Q K^T and P V for every query head: heads sharing a key/value head still each take their
  // own products, so grouping saves input width, not these.
  const double matmul_macs = 2 * tokens * tokens * hidden;
  // Causal masking is counted as full matrices: that is what dense kernels compute.
  cost.forward_flops = 2 * matmul_macs + (kSoftmaxForward + 1) * scores;  // +1: the 1/sqrt(d) scale
  cost.backward_input_flops = 4 * matmul_macs + kSoftmaxBackward * scores;
  if (a.rope_theta > 0.0) {
    const double head_dim = hidden / static_cast<double>(a.heads);
    const double rotated = tokens * static_cast<double>(a.heads + a.kv_head_count()) * head_dim;  // q and k
    cost.forward_flops += kRopeForwardPerElement * rotated;
    cost.backward_input_flops += kRopeBackwardPerElement * rotated;
  }
  if (a.fused) {
    // The scores again, one more Q K^T (T x T x hidden MACs, 2 FLOPs each: matmul_macs, which
    // counts the MACs of both products), and the probabilities from them.
    cost.backward_input_flops += matmul_macs + kRecomputedProbabilityPerScore * scores;
  }
  if (a.dropout > 0.0) {  // one multiply per probability each way
    cost.forward_flops += scores;
    cost.backward_input_flops += scores;
  }
  // Backward reads the fused input (the rotation is recomputed from positions) and what
  // attention_kept.h says: the probabilities, or with fused only each score row's log-sum-exp.
  cost.saved.inputs = {0};
  const AttentionKept kept = attention_kept_per_sample(a, in_shape[0]);
  cost.saved.extra_elements = kept.elements;
  cost.saved.extra_bytes = kept.bytes;
}

}  // namespace

const OpUnit self_attention_unit = {
    .kind = OpKind::self_attention,
    .name = "self_attention",
    .default_attrs = []() -> OpAttrs { return SelfAttentionAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .arithmetic = ArithmeticPattern::matrix_product,
};

}  // namespace splitbrain::model::ops
