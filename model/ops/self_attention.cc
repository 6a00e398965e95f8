// self_attention: multi-head scaled dot-product attention on a fused q|k|v input [T, 3D], giving
// [T, D]; the projections around it are ordinary linear layers.

#include <fmt/format.h>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

constexpr double kSoftmaxForward = 5, kSoftmaxBackward = 4;  // max, subtract, exp, sum, divide

OpAttrs read(JsonObjectReader& fields) {
  return SelfAttentionAttrs{fields.required_int("heads"), fields.optional_bool("causal", true),
                            fields.optional_number("dropout", 0.0)};
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<SelfAttentionAttrs>(attrs);
  out["heads"] = a.heads;
  out["causal"] = a.causal;
  if (a.dropout > 0.0) out["dropout"] = a.dropout;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<SelfAttentionAttrs>();
  require_values(site, *producers[0]);
  const Shape& in = producers[0]->output_shape;
  require_positive(site, "heads", a.heads);
  if (!(a.dropout >= 0.0 && a.dropout < 1.0)) site.fail("dropout", fmt::format("must be in [0, 1), got {}", a.dropout));
  if (in.size() != 2 || in[1] % 3 != 0) {
    site.fail("inputs", fmt::format("needs a fused q|k|v input [T, 3*D], got {}", shape_to_string(in)));
  }
  const int64_t hidden = in[1] / 3;
  if (hidden % a.heads != 0) site.fail("heads", fmt::format("{} heads do not divide the width {}", a.heads, hidden));
  layer.output_shape = {in[0], hidden};
}

void cost(const Layer& layer, std::span<const Layer* const> producers, LayerCost& cost) {
  const auto& a = layer.attr<SelfAttentionAttrs>();
  const Shape& in_shape = producers[0]->output_shape;
  const double tokens = static_cast<double>(in_shape[0]);
  const double hidden = static_cast<double>(in_shape[1] / 3);
  const double scores = static_cast<double>(a.heads) * tokens * tokens;
  const double matmul_macs = 2 * tokens * tokens * hidden;  // Q K^T and P V, all heads
  // Causal masking is counted as full matrices: that is what dense kernels compute.
  cost.forward_flops = 2 * matmul_macs + (kSoftmaxForward + 1) * scores;  // +1: the 1/sqrt(d) scale
  cost.backward_input_flops = 4 * matmul_macs + kSoftmaxBackward * scores;
  cost.saved.inputs = {0};
  cost.saved.extra_elements = static_cast<int64_t>(scores);  // the attention probabilities
  if (a.dropout > 0.0) {
    // Dropout on them keeps the dropped probabilities and a one-byte mask too.
    cost.forward_flops += scores;
    cost.backward_input_flops += scores;
    cost.saved.extra_elements += static_cast<int64_t>(scores);
    cost.saved.extra_bytes += static_cast<int64_t>(scores);
  }
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
