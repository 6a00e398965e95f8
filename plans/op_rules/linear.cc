// linear: batch; output features (weight rows); input features (weight columns, partial-sum
// output); positions of a sequence.

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& a = rule.layer().attr<model::LinearAttrs>();
  const auto& x = request.input_shapes[0];
  const int features = static_cast<int>(x.size()) - 1;
  const int positions = x.size() == 3 ? 1 : -1;
  out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::in, features}, {R::spatial, positions}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, features}, {R::spatial, positions}}, {R::in});
  out.input_gradients.push_back(rule.layout(x, {{R::batch, 0}, {R::in, features}, {R::spatial, positions}}, {R::out}));
  // A tied weight belongs to its embedding, which holds (and synchronises) the shard.
  if (a.tied_to.empty() || request.holds_tied_copy)
    out.parameters.push_back(rule.parameter({a.out_features, a.in_features}, {{R::out, 0}, {R::in, 1}}));
  if (a.bias) out.parameters.push_back(rule.parameter({a.out_features}, {{R::out, 0}}));
}

std::optional<KernelProblem> kernel_problem(const KernelProblemRequest& request) {
  const std::vector<int64_t> y =
      local_shape(request.layouts.output, request.mesh, activation_shape(request.layer, request.micro_batch));
  LinearProblem problem;
  problem.rows = rows_of(request.local_input);
  problem.in_features = request.local_input.back();
  problem.out_features = y.back();
  problem.bias = request.layer.attr<model::LinearAttrs>().bias;
  return problem;
}

}  // namespace

const OpRules linear = {model::OpKind::linear, any_role, layouts, kernel_problem};

}  // namespace splitbrain::plans::op_rules_of
