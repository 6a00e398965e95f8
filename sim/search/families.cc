#include "sim/search/families.h"

#include <fmt/format.h>

#include "plans/op_sharding.h"
#include "plans/plan_error.h"
#include "sim/search/search_mesh.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;
using plans::ShardRole;

bool fits(const plans::Plan& plan, int layer, const LayerSharding& sharding) {
  try {
    plans::layer_layouts(*plan.model, layer, sharding, plan.mesh, plan.micro_batch_size(), plan.dtype);
    return true;
  } catch (const plans::PlanError&) {
    return false;
  }
}

// The preferred sharding if the layer takes it, else its batch split alone, else replication.
LayerSharding fitted(const plans::Plan& plan, int layer, const LayerSharding& preferred) {
  if (fits(plan, layer, preferred)) return preferred;
  LayerSharding batch_only;
  batch_only.batch = preferred.batch;
  if (fits(plan, layer, batch_only)) return batch_only;
  return LayerSharding{};
}

// Fills every layer: deciding layers by `rule`, the others by inheritance, each fitted.
// nullopt when the batch cannot even be split as the family needs (the plan would be another
// family's in disguise).
std::optional<plans::Plan> build_family(const PlannerRequest& request, std::string family, const SearchMesh& mesh,
                                        const std::function<LayerSharding(const model::Layer&)>& rule) {
  plans::Plan plan = skeleton_plan(request, mesh.mesh);
  plan.family = std::move(family);
  const model::Model& net = *plan.model;
  for (int v = 0; v < net.size(); ++v) {
    const model::Layer& layer = net.layer(v);
    const LayerSharding preferred =
        plans::chooses_own_sharding(layer)
            ? rule(layer)
            : plans::inherited_sharding(layer, plan.layers[static_cast<size_t>(layer.inputs.front())]);
    plan.layers[static_cast<size_t>(v)] = fitted(plan, v, preferred);
  }
  // The input layer's batch split is the family's data parallelism: if even that did not fit,
  // the batch does not divide over the mesh.
  if (plan.layers.front().batch.size() != rule(net.layer(0)).batch.size()) return std::nullopt;
  return plan;
}

std::vector<int> axes(std::initializer_list<int> list) {
  std::vector<int> result;
  for (int axis : list) {
    if (axis >= 0) result.push_back(axis);
  }
  return result;
}

}  // namespace

std::optional<plans::Plan> data_parallel_plan(const PlannerRequest& request) {
  const SearchMesh mesh = make_search_mesh(1, request.devices, 1, 1);
  return build_family(request, "data-parallel", mesh, [&](const model::Layer&) {
    return LayerSharding{axes({mesh.data}), {}, {}, {}};
  });
}

std::optional<plans::Plan> model_parallel_plan(const PlannerRequest& request) {
  if (request.devices < 2) return std::nullopt;
  const SearchMesh mesh = make_search_mesh(1, 1, 1, request.devices);
  return build_family(request, "model-parallel", mesh, [&](const model::Layer& layer) {
    if (layer.kind == model::OpKind::input) return LayerSharding{};
    return LayerSharding{{}, axes({mesh.model}), {}, {}};
  });
}

std::vector<plans::Plan> splitbrain_plans(const PlannerRequest& request) {
  std::vector<plans::Plan> result;
  for (int group : divisors(request.devices)) {
    if (group < 2 || group > request.max_model_axis) continue;
    const SearchMesh mesh = make_search_mesh(1, request.devices / group, 1, group);
    auto plan = build_family(request, fmt::format("splitbrain g={}", group), mesh, [&](const model::Layer& layer) {
      if (layer.kind == model::OpKind::linear) return LayerSharding{axes({mesh.data}), axes({mesh.model}), {}, {}};
      return LayerSharding{axes({mesh.data, mesh.model}), {}, {}, {}};
    });
    if (plan) result.push_back(std::move(*plan));
  }
  return result;
}

std::vector<plans::Plan> gholami_grid_plans(const PlannerRequest& request) {
  std::vector<plans::Plan> result;
  for (int rows : divisors(request.devices)) {
    if (rows < 2 || rows == request.devices || rows > request.max_model_axis) continue;
    const int columns = request.devices / rows;
    const SearchMesh mesh = make_search_mesh(1, columns, 1, rows);
    auto plan =
        build_family(request, fmt::format("gholami-grid {}x{}", rows, columns), mesh, [&](const model::Layer& layer) {
          if (layer.kind == model::OpKind::input) return LayerSharding{axes({mesh.data}), {}, {}, {}};
          return LayerSharding{axes({mesh.data}), axes({mesh.model}), {}, {}};
        });
    if (plan) result.push_back(std::move(*plan));
  }
  return result;
}

std::vector<plans::Plan> domain_parallel_plans(const PlannerRequest& request) {
  std::vector<plans::Plan> result;
  for (int space : divisors(request.devices)) {
    if (space < 2 || space > request.max_space_axis) continue;
    const SearchMesh mesh = make_search_mesh(1, request.devices / space, space, 1);
    plans::Plan probe = skeleton_plan(request, mesh.mesh);
    auto plan = build_family(request, fmt::format("domain-parallel s={}", space), mesh, [&](const model::Layer& layer) {
      const LayerSharding spatial{axes({mesh.data}), {}, {}, axes({mesh.space})};
      const int index = static_cast<int>(&layer - probe.model->layers().data());
      return fits(probe, index, spatial) ? spatial : LayerSharding{axes({mesh.data, mesh.space}), {}, {}, {}};
    });
    if (plan) result.push_back(std::move(*plan));
  }
  return result;
}

}  // namespace splitbrain::sim
