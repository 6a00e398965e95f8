// flatten: batch, and the leading feature dimension (it stays contiguous when flattened).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& x = request.input_shapes[0];
  if (rule.splits(R::out) && role_dims(x, false).channel != 1) {
    rule.fail(R::out, "only the leading feature dimension stays contiguous when flattened");
  }
  out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::out, 1}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, 1}});
}

}  // namespace

const OpRules flatten = {model::OpKind::flatten, batch_or_out, layouts};

}  // namespace splitbrain::plans::op_rules_of
