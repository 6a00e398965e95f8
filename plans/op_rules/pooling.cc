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

std::optional<KernelProblem> window_problem(const KernelProblemRequest& request, bool max) {
  const std::vector<int64_t>& x = request.local_input;
  if (x.size() != 4) return std::nullopt;
  const auto& a = request.layer.attr<model::Pool2dAttrs>();
  PoolProblem problem;
  problem.max = max;
  problem.batch = x[0];
  problem.channels = x[1];
  problem.height = x[2];
  problem.width = x[3];
  problem.kernel_h = a.kernel.h;
  problem.kernel_w = a.kernel.w;
  problem.stride_h = a.stride.h;
  problem.stride_w = a.stride.w;
  problem.pad_top = problem.pad_bottom = a.padding.h;
  problem.pad_left = problem.pad_right = a.padding.w;
  problem.ceil_mode = a.ceil_mode;
  return problem;
}

std::optional<KernelProblem> max_problem(const KernelProblemRequest& request) { return window_problem(request, true); }
std::optional<KernelProblem> average_problem(const KernelProblemRequest& request) {
  return window_problem(request, false);
}

}  // namespace

const OpRules maxpool = {model::OpKind::maxpool, any_role_but_in, window_layouts, max_problem};
const OpRules avgpool = {model::OpKind::avgpool, any_role_but_in, window_layouts, average_problem};
const OpRules adaptive_avgpool = {model::OpKind::adaptive_avgpool, batch_or_out, same_layout_everywhere};

}  // namespace splitbrain::plans::op_rules_of
