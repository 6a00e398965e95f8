// self_attention: batch, and heads (out).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans::op_rules_of {
namespace {

// The fused input is head-major ([head][q|k|v][head_dim]), so contiguous blocks of the features
// are whole heads: splitting `out` splits the heads.
void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  rule.require_divisible(R::out, "attention heads", rule.layer().attr<model::SelfAttentionAttrs>().heads);
  out.inputs.push_back(rule.layout(request.input_shapes[0], {{R::batch, 0}, {R::out, 2}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, 2}});
}

// The executor runs attention without dropout on its probabilities: no problem for one with it.
std::optional<KernelProblem> kernel_problem(const KernelProblemRequest& request) {
  const auto& attention = request.layer.attr<model::SelfAttentionAttrs>();
  const std::vector<int64_t>& x = request.local_input;
  const std::vector<int64_t> global = activation_shape(request.layer, request.micro_batch);
  const std::vector<int64_t> y = local_shape(request.layouts.output, request.mesh, global);
  if (attention.dropout > 0.0 || x.size() != 3 || y.size() != 3 || attention.heads <= 0) return std::nullopt;
  const int64_t head_dim = global.back() / attention.heads;
  if (head_dim <= 0 || y.back() % head_dim != 0) return std::nullopt;
  return AttentionProblem{x[0], x[1], y.back() / head_dim, head_dim, attention.causal};
}

}  // namespace

const OpRules self_attention = {model::OpKind::self_attention, batch_or_out, layouts, kernel_problem};

}  // namespace splitbrain::plans::op_rules_of
