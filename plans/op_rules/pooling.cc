// maxpool, avgpool (batch, channels, height where the windows tile the input) and
// adaptive_avgpool (batch, channels).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void window_layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  const auto& a = rule.layer().attr<model::Pool2dAttrs>();
  if (rule.splits(ShardRole::spatial)) {
    const bool tiles = a.kernel == a.stride && a.padding == model::Size2{0, 0} && !a.ceil_mode;
    if (!tiles)
      rule.fail(ShardRole::spatial,
                "only pooling whose windows tile the input (kernel = stride, no padding) splits its height");
  }
  same_layout_everywhere(rule, request, out);
}

}  // namespace

const OpRules maxpool = {model::OpKind::maxpool, any_role_but_in, window_layouts};
const OpRules avgpool = {model::OpKind::avgpool, any_role_but_in, window_layouts};
const OpRules adaptive_avgpool = {model::OpKind::adaptive_avgpool, batch_or_out, same_layout_everywhere};

}  // namespace splitbrain::plans::op_rules_of
