#include "plans/op_rules/rule_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plans/op_rules.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

RoleDims role_dims(const std::vector<int64_t>& shape, bool tokens) {
  switch (shape.size()) {
    case 4:
      return {1, 2};
    case 3:
      return {2, 1};
    case 2:
      return tokens ? RoleDims{-1, 1} : RoleDims{1, -1};
    default:
      return {};
  }
}

void RuleContext::fail(ShardRole role, std::string_view problem) const {
  throw PlanError(fmt::format("layer '{}': role '{}': {}", layer_.name, role_name(role), problem));
}

void RuleContext::require_divisible(ShardRole role, std::string_view what, int64_t extent) const {
  const int n = ways(role);
  if (extent % n != 0) {
    fail(role, fmt::format("{} {} cannot be split evenly over {} ranks ({})", extent, what, n, axis_names(role)));
  }
}

TensorLayout RuleContext::layout(const std::vector<int64_t>& shape,
                                 std::initializer_list<std::pair<ShardRole, int>> placement,
                                 std::initializer_list<ShardRole> partial) const {
  TensorLayout result = replicated(static_cast<int>(shape.size()));
  for (const auto& [role, dim] : placement) {
    if (axes(role).empty()) continue;
    if (dim < 0 || dim >= static_cast<int>(shape.size())) {
      fail(role, fmt::format("the tensor {} has no dimension for it", shape_text(shape)));
    }
    // The message is formatted only for a split that fails: every plan the planner weighs lays
    // out each of its layers' tensors here.
    if (shape[static_cast<size_t>(dim)] % ways(role) != 0) {
      require_divisible(role, fmt::format("elements of dimension {} of {}", dim, shape_text(shape)),
                        shape[static_cast<size_t>(dim)]);
    }
    auto& list = result.dim_axes[static_cast<size_t>(dim)];
    list.insert(list.end(), axes(role).begin(), axes(role).end());
  }
  for (ShardRole role : partial) {
    result.partial_axes.insert(result.partial_axes.end(), axes(role).begin(), axes(role).end());
  }
  validate(result, mesh_, shape);
  return result;
}

ParameterShard RuleContext::parameter(std::vector<int64_t> shape,
                                      std::initializer_list<std::pair<ShardRole, int>> placement) const {
  ParameterShard shard;
  shard.layout = layout(shape, placement);
  shard.local_elements = local_element_count(shard.layout, mesh_, shape);
  shard.global_shape = std::move(shape);
  return shard;
}

std::vector<int> RuleContext::axes_of(std::initializer_list<ShardRole> roles) const {
  std::vector<int> result;
  for (ShardRole role : roles) result.insert(result.end(), axes(role).begin(), axes(role).end());
  return result;
}

double RuleContext::work_fraction() const {
  return 1.0 / mesh_.group_size(axes_of({ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial}));
}

std::string RuleContext::axis_names(ShardRole role) const {
  std::vector<std::string> names;
  for (int axis : axes(role)) names.push_back(mesh_.axis(axis).name);
  return fmt::format("{}", fmt::join(names, "+"));
}

void same_layout_everywhere(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const RoleDims& y = request.output_dims;
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, y.channel}, {R::spatial, y.spatial}});
  for (const auto& x_shape : request.input_shapes) {
    const RoleDims d = role_dims(x_shape, false);
    out.inputs.push_back(rule.layout(x_shape, {{R::batch, 0}, {R::out, d.channel}, {R::spatial, d.spatial}}));
  }
}

}  // namespace splitbrain::plans
