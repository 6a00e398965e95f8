// conv2d: batch; output channels (weight rows); input channels (weight columns, partial-sum
// output); height (stride-1 same-padded odd kernels only, with a halo exchange).

#include "model/dtype.h"
#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/tensor_layout.h"
#include "plans/transfers.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const model::Layer& layer = rule.layer();
  const auto& a = layer.attr<model::Conv2dAttrs>();
  const auto& x = request.input_shapes[0];
  if (rule.splits(R::in) && a.groups != 1) rule.fail(R::in, "grouped convolutions cannot split their input channels");
  if (rule.splits(R::spatial)) {
    const bool same_size = a.stride == model::Size2{1, 1} && a.dilation == model::Size2{1, 1} && a.kernel.h % 2 == 1 &&
                           a.padding.h == a.kernel.h / 2;
    if (!same_size) rule.fail(R::spatial, "only stride-1, odd-kernel, same-padded convolutions split their height");
  }
  out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::in, 1}, {R::spatial, 2}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, 1}, {R::spatial, 2}}, {R::in});
  out.input_gradients.push_back(rule.layout(x, {{R::batch, 0}, {R::in, 1}, {R::spatial, 2}}, {R::out}));
  out.parameters.push_back(
      rule.parameter({a.out_channels, x[1] / a.groups, a.kernel.h, a.kernel.w}, {{R::out, 0}, {R::in, 1}}));
  if (a.bias) out.parameters.push_back(rule.parameter({a.out_channels}, {{R::out, 0}}));
  if (rule.splits(R::spatial) && a.kernel.h > 1) {
    const Collective halo =
        halo_exchange(out.inputs[0], rule.mesh(), x, model::bytes_per_element(request.dtype), 2, a.kernel.h / 2);
    out.forward_internal.push_back(halo);
    // The halo rows' gradients go back to their owners: only when an input gradient is made.
    if (layer.needs_input_gradient) out.backward_internal.push_back(halo);
  }
}

// A height split receives its neighbours' boundary rows (zeros at the image's edges), so its
// kernel reads the extended block and pads only the width.
std::optional<KernelProblem> kernel_problem(const KernelProblemRequest& request) {
  if (request.layouts.parameters.empty()) return std::nullopt;
  const auto& a = request.layer.attr<model::Conv2dAttrs>();
  const ParameterShard& weight = request.layouts.parameters[0];
  const std::vector<int64_t> w = local_shape(weight.layout, request.mesh, weight.global_shape);
  const std::vector<int64_t>& x = request.local_input;
  const auto& internal = request.layouts.forward_internal;
  const int64_t halo_rows = internal.empty() ? 0 : internal.front().halo_rows;
  ConvProblem problem;
  problem.batch = x.at(0);
  problem.in_channels = x.at(1);
  problem.height = x.at(2) + 2 * halo_rows;
  problem.width = x.at(3);
  problem.out_channels = w.at(0);
  problem.kernel_h = a.kernel.h;
  problem.kernel_w = a.kernel.w;
  problem.stride_h = a.stride.h;
  problem.stride_w = a.stride.w;
  problem.pad_top = problem.pad_bottom = halo_rows > 0 ? 0 : a.padding.h;
  problem.pad_left = problem.pad_right = a.padding.w;
  problem.dilation_h = a.dilation.h;
  problem.dilation_w = a.dilation.w;
  problem.groups = a.groups;
  problem.bias = a.bias;
  return problem;
}

}  // namespace

const OpRules conv2d = {model::OpKind::conv2d, any_role, layouts, kernel_problem};

}  // namespace splitbrain::plans::op_rules_of
