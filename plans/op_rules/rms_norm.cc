// rms_norm: batch and positions split freely (each position is normalised on its own); the
// normalised features are never split (no out), so its weight is whole on every rank.

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  same_layout_everywhere(rule, request, out);
  out.parameters.push_back(rule.parameter({request.output_shape.back()}, {}));
}

}  // namespace

// No kernel problem of its own: the simulator prices it as an elementwise pass by its unit.
const OpRules rms_norm = {model::OpKind::rms_norm, batch_or_spatial, layouts, nullptr, true};

}  // namespace splitbrain::plans::op_rules_of
