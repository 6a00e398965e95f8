// softmax_cross_entropy: batch, and positions (each rank then holds its positions' share of the
// per-sample loss, a partial sum).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& x = request.input_shapes[0];
  const int positions = x.size() == 3 ? 1 : -1;
  out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::spatial, positions}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}}, {R::spatial});
}

std::optional<KernelProblem> kernel_problem(const KernelProblemRequest& request) {
  return LossProblem{rows_of(request.local_input), request.local_input.back()};
}

}  // namespace

const OpRules softmax_cross_entropy = {model::OpKind::softmax_cross_entropy, batch_or_spatial, layouts, kernel_problem};

}  // namespace splitbrain::plans::op_rules_of
