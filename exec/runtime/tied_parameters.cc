#include "exec/runtime/tied_parameters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "model/errors.h"

namespace splitbrain::exec {
namespace {

std::vector<int> sorted(std::vector<int> axes) {
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::string axis_names(const plans::Mesh& mesh, const std::vector<int>& axes) {
  std::vector<std::string> names;
  for (int axis : axes) names.push_back(mesh.axis(axis).name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, "+"));
}

std::string layout_text(const plans::Mesh& mesh, const plans::TensorLayout& layout) {
  std::vector<std::string> dims;
  for (const auto& axes : layout.dim_axes) dims.push_back(axis_names(mesh, axes));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

}  // namespace

int tied_table_layer(const model::Model& net, int layer) {
  const model::Layer& l = net.layer(layer);
  if (l.kind != model::OpKind::linear || l.attr<model::LinearAttrs>().tied_to.empty()) return -1;
  return net.find(l.attr<model::LinearAttrs>().tied_to);
}

void check_tied_weights(const plans::Plan& plan, const plans::CompiledPlan& compiled) {
  const model::Model& net = *plan.model;
  const plans::Mesh& mesh = plan.mesh;
  for (int v = 0; v < net.size(); ++v) {
    const int table = tied_table_layer(net, v);
    if (table < 0) continue;
    const std::string& name = net.layer(v).name;
    const std::string& owner = net.layer(table).name;
    const plans::CompiledLayer& head = compiled.layers[static_cast<size_t>(v)];
    const plans::CompiledLayer& embedding = compiled.layers[static_cast<size_t>(table)];
    if (head.stage != embedding.stage) {
      throw InputError(fmt::format("layer '{}': its weight is tied to '{}' on another pipeline stage (stage {} vs {}); "
                                   "sharing it across stages is not supported by the executor yet",
                                   name, owner, head.stage, embedding.stage));
    }
    // The weight block the head needs: [out_features, in_features] split by its out and in roles.
    const plans::LayerSharding& sharding = plan.layers[static_cast<size_t>(v)];
    plans::TensorLayout needed = plans::replicated(2);
    needed.dim_axes[0] = sharding.out;
    needed.dim_axes[1] = sharding.in;
    const plans::TensorLayout& held = embedding.layouts.parameters.at(0).layout;
    if (!(needed == held)) {
      throw InputError(fmt::format("layer '{}': roles out/in split its tied weight as {}, but '{}' holds the table as {}; "
                                   "a tied weight split differently from its embedding is not supported by the executor yet",
                                   name, layout_text(mesh, needed), owner, layout_text(mesh, held)));
    }
    std::vector<int> head_sync = sharding.batch;
    head_sync.insert(head_sync.end(), sharding.spatial.begin(), sharding.spatial.end());
    if (sorted(head_sync) != sorted(embedding.layouts.gradient_sync_axes)) {
      throw InputError(fmt::format("layer '{}': roles batch/spatial sum its tied weight's gradient over {}, but '{}' "
                                   "synchronises the table over {}; this is not supported by the executor yet",
                                   name, axis_names(mesh, head_sync), owner,
                                   axis_names(mesh, embedding.layouts.gradient_sync_axes)));
    }
  }
}

ParameterViews parameter_views(const model::Model& net, std::vector<LayerParameters>& parameters, int layer) {
  ParameterViews views;
  const int table = tied_table_layer(net, layer);
  if (table >= 0) {
    LayerParameters& owner = parameters[static_cast<size_t>(table)];
    views.values.push_back(owner.values.at(0).get());
    views.grads.push_back(owner.grads.at(0).get());
  }
  LayerParameters& own = parameters[static_cast<size_t>(layer)];
  for (const TrackedArray& value : own.values) views.values.push_back(value.get());
  for (const TrackedArray& grad : own.grads) views.grads.push_back(grad.get());
  return views;
}

}  // namespace splitbrain::exec
