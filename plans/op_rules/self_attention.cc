// self_attention: batch, and heads (out).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

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

}  // namespace

const OpRules self_attention = {model::OpKind::self_attention, batch_or_out, layouts};

}  // namespace splitbrain::plans::op_rules_of
