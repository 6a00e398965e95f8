// input: the data split like any activation (batch, channels or features, height or positions).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const RoleDims& y = request.output_dims;
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, y.channel}, {R::spatial, y.spatial}});
}

}  // namespace

const OpRules input = {model::OpKind::input, any_role_but_in, layouts};

}  // namespace splitbrain::plans::op_rules_of
