// relu, gelu, dropout and add: inputs and output split alike by any role but a partial sum
// (none of them is linear in a way a partial input survives).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

int64_t local_elements(const KernelProblemRequest& request) {
  int64_t elements = 1;
  for (int64_t extent : request.local_input) elements *= extent;
  return elements;
}

std::optional<KernelProblem> relu_problem(const KernelProblemRequest& request) {
  return ActivationProblem{model::OpKind::relu, local_elements(request), 0.0};
}
std::optional<KernelProblem> gelu_problem(const KernelProblemRequest& request) {
  return ActivationProblem{model::OpKind::gelu, local_elements(request), 0.0};
}
std::optional<KernelProblem> dropout_problem(const KernelProblemRequest& request) {
  return ActivationProblem{model::OpKind::dropout, local_elements(request),
                           request.layer.attr<model::DropoutAttrs>().probability};
}

}  // namespace

const OpRules relu = {model::OpKind::relu, any_role_but_in, same_layout_everywhere, relu_problem};
const OpRules gelu = {model::OpKind::gelu, any_role_but_in, same_layout_everywhere, gelu_problem};
const OpRules dropout = {model::OpKind::dropout, any_role_but_in, same_layout_everywhere, dropout_problem, true};
const OpRules add = {model::OpKind::add, any_role_but_in, same_layout_everywhere, nullptr, true};

}  // namespace splitbrain::plans::op_rules_of
