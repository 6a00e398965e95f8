// concat: split alike off the concatenated axis (the local blocks then join into the output's).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  const int axis = static_cast<int>(rule.layer().attr<model::ConcatAttrs>().axis) + 1;
  if (axis == request.output_dims.channel && rule.splits(ShardRole::out))
    rule.fail(ShardRole::out, "the channels are the concatenated dimension");
  if (axis == request.output_dims.spatial && rule.splits(ShardRole::spatial))
    rule.fail(ShardRole::spatial, "the height is the concatenated dimension");
  same_layout_everywhere(rule, request, out);
}

}  // namespace

const OpRules concat = {model::OpKind::concat, any_role_but_in, layouts};

}  // namespace splitbrain::plans::op_rules_of
