#include "plans/op_sharding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

using model::Layer;
using model::OpKind;

constexpr std::array kAllRoles = {ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial};

void check_axes(const Layer& layer, const LayerSharding& sharding, const Mesh& mesh) {
  std::vector<int> seen;
  for (ShardRole role : kAllRoles) {
    for (int axis : sharding.axes(role)) {
      if (axis < 0 || axis >= mesh.axis_count()) {
        throw PlanError(
            fmt::format("layer '{}': role '{}': mesh axis {} does not exist", layer.name, role_name(role), axis));
      }
      if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
        throw PlanError(fmt::format("layer '{}': role '{}': mesh axis '{}' is already used by another role", layer.name,
                                    role_name(role), mesh.axis(axis).name));
      }
      seen.push_back(axis);
    }
    if (!sharding.axes(role).empty() && !role_allowed(layer, role)) {
      const std::string_view reason = op_rules(layer.kind).refused_roles_reason;
      throw PlanError(fmt::format("layer '{}': role '{}': a {} layer cannot be split this way{}{}", layer.name,
                                  role_name(role), model::op_name(layer.kind), reason.empty() ? "" : ": ", reason));
    }
  }
}

}  // namespace

bool role_allowed(const Layer& layer, ShardRole role) { return op_rules(layer.kind).role_allowed(role); }

bool chooses_own_sharding(const Layer& layer) {
  if (layer.kind == OpKind::input || layer.inputs.empty() || layer.cost.params > 0) return true;
  return layer.kind == OpKind::linear && !layer.attr<model::LinearAttrs>().tied_to.empty();
}

LayerSharding inherited_sharding(const Layer& layer, const LayerSharding& producer) {
  LayerSharding inherited = producer;
  for (ShardRole role : kAllRoles) {
    if (!role_allowed(layer, role)) inherited.axes(role).clear();
  }
  return inherited;
}

std::vector<int64_t> activation_shape(const Layer& layer, int64_t batch) {
  return model::with_batch(layer.output_shape, batch);
}

LayerLayouts layer_layouts(const model::Model& model, int index, const LayerSharding& sharding, const Mesh& mesh,
                           int64_t batch, model::DType dtype, bool holds_tied_copy) {
  const Layer& layer = model.layer(index);
  check_axes(layer, sharding, mesh);
  const RuleContext rule(layer, sharding, mesh);
  using R = ShardRole;

  LayoutRequest request;
  request.output_shape = activation_shape(layer, batch);
  request.output_dims = role_dims(request.output_shape, layer.output_is_tokens);
  for (int producer : layer.inputs) request.input_shapes.push_back(activation_shape(model.layer(producer), batch));
  request.dtype = dtype;
  request.holds_tied_copy = holds_tied_copy;

  LayerLayouts out;
  out.work_fraction = rule.work_fraction();
  op_rules(layer.kind).layouts(rule, request, out);
  if (out.input_gradients.empty()) out.input_gradients = out.inputs;
  if (!out.parameters.empty()) out.gradient_sync_axes = rule.axes_of({R::batch, R::spatial});
  return out;
}

}  // namespace splitbrain::plans
