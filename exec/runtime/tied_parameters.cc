#include "exec/runtime/tied_parameters.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/errors.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec {
namespace {

// What one mesh axis does to the tied weight, seen from one of the two layers.
enum class AxisPart { none, rows, columns, samples };

std::string_view part_name(AxisPart part) {
  switch (part) {
    case AxisPart::rows:
      return "splits the vocabulary rows";
    case AxisPart::columns:
      return "splits the columns";
    case AxisPart::samples:
      return "splits the samples or positions";
    case AxisPart::none:
      break;
  }
  return "is not used";
}

bool contains(const std::vector<int>& axes, int axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// The table is [vocabulary, width]: the embedding splits its rows with `in` and its columns with
// `out`; the head ([out_features = vocabulary, in_features = width]) the other way round.
AxisPart embedding_part(const plans::LayerSharding& s, int axis) {
  if (contains(s.in, axis)) return AxisPart::rows;
  if (contains(s.out, axis)) return AxisPart::columns;
  if (contains(s.batch, axis) || contains(s.spatial, axis)) return AxisPart::samples;
  return AxisPart::none;
}

AxisPart head_part(const plans::LayerSharding& s, int axis) {
  if (contains(s.out, axis)) return AxisPart::rows;
  if (contains(s.in, axis)) return AxisPart::columns;
  if (contains(s.batch, axis) || contains(s.spatial, axis)) return AxisPart::samples;
  return AxisPart::none;
}

bool is_prefix(const std::vector<int>& prefix, const std::vector<int>& axes) {
  return prefix.size() <= axes.size() && std::equal(prefix.begin(), prefix.end(), axes.begin());
}

// The layout of the weight block the head needs.
plans::TensorLayout head_weight_layout(const plans::LayerSharding& s) {
  plans::TensorLayout layout = plans::replicated(2);
  layout.dim_axes[0] = s.out;
  layout.dim_axes[1] = s.in;
  return layout;
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
    const int head_stage = compiled.layers[static_cast<size_t>(v)].stage;
    const int table_stage = compiled.layers[static_cast<size_t>(table)].stage;
    if (head_stage != table_stage) {
      throw InputError(
          fmt::format("layer '{}': its weight is tied to '{}' on another pipeline stage (stage {} vs {}); "
                      "sharing it across stages is not supported by the executor yet",
                      name, owner, head_stage, table_stage));
    }
    const bool table_sliced =
        plan.mesh.group_size(compiled.layers[static_cast<size_t>(table)].layouts.gradient_sync_axes) > 1;
    if (plan.zero_stage >= 3 && table_sliced) {
      throw InputError(
          fmt::format("layer '{}': under ZeRO 3 the table of '{}' is gathered for that layer only, and "
                      "a gather for the tied head is not in the plan; this is not supported by the "
                      "executor yet",
                      name, owner));
    }
    const plans::LayerSharding& head = plan.layers[static_cast<size_t>(v)];
    const plans::LayerSharding& embedding = plan.layers[static_cast<size_t>(table)];
    for (int axis = 0; axis < mesh.axis_count(); ++axis) {
      const AxisPart e = embedding_part(embedding, axis);
      const AxisPart h = head_part(head, axis);
      const bool fine = e == AxisPart::samples || h == e;
      if (!fine) {
        throw InputError(
            fmt::format("layer '{}': mesh axis '{}' {} for it but {} for '{}', whose table is its weight; "
                        "sharing the table so would need communication the plan does not list, which is "
                        "not supported by the executor yet",
                        name, mesh.axis(axis).name, part_name(h), part_name(e), owner));
      }
    }
    const plans::TensorLayout needed = head_weight_layout(head);
    const plans::TensorLayout& held = compiled.layers[static_cast<size_t>(table)].layouts.parameters.at(0).layout;
    for (size_t d = 0; d < 2; ++d) {
      if (!is_prefix(held.dim_axes[d], needed.dim_axes[d])) {
        throw InputError(
            fmt::format("layer '{}': its tied weight's dimension {} is split over its axes in another "
                        "order than the table of '{}'; this is not supported by the executor yet",
                        name, d, owner));
      }
    }
  }
}

namespace {

// Whether this rank adds the head's weight gradient: not when it is a replica, other than the
// first, over axes the table's gradient is summed over.
bool adds_head_gradient(const plans::Plan& plan, int rank, int layer, int table) {
  const plans::LayerSharding& embedding = plan.layers[static_cast<size_t>(table)];
  const plans::LayerSharding& head = plan.layers[static_cast<size_t>(layer)];
  std::vector<int> replicas;
  for (int axis = 0; axis < plan.mesh.axis_count(); ++axis) {
    if (embedding_part(embedding, axis) == AxisPart::samples && head_part(head, axis) == AxisPart::none) {
      replicas.push_back(axis);
    }
  }
  return replicas.empty() || plan.mesh.index_in_group(rank, replicas) == 0;
}

}  // namespace

ParameterViews parameter_views(Device& device, const plans::Plan& plan, const plans::CompiledPlan& compiled, int rank,
                               std::vector<LayerParameters>& parameters, int layer) {
  ParameterViews views;
  const int table = tied_table_layer(*plan.model, layer);
  if (table >= 0) {
    LayerParameters& owner = parameters[static_cast<size_t>(table)];
    DeviceArray& values = *owner.values.at(0);
    DeviceArray& grads = *owner.grads.at(0);
    const plans::ParameterShard& shard = compiled.layers[static_cast<size_t>(table)].layouts.parameters.at(0);
    const plans::TensorLayout needed = head_weight_layout(plan.layers[static_cast<size_t>(layer)]);
    const auto shape = plans::local_shape(needed, plan.mesh, shard.global_shape);
    const bool adds = adds_head_gradient(plan, rank, layer, table);
    if (shape == values.shape()) {
      views.values.push_back(&values);
      if (adds) {
        views.grads.push_back(&grads);
      } else {
        views.grad_block = device.allocate(shape, true);
        views.grads.push_back(views.grad_block.get());
      }
    } else {
      // Rows and columns of the needed block within this rank's block of the table.
      const auto needed_at = plans::local_offset(needed, plan.mesh, shard.global_shape, rank);
      const auto held_at = plans::local_offset(shard.layout, plan.mesh, shard.global_shape, rank);
      views.block_offset = {needed_at[0] - held_at[0], needed_at[1] - held_at[1]};
      views.weight_block = device.allocate(shape, false);
      device.copy_block(values, views.block_offset, *views.weight_block);
      views.grad_block = device.allocate(shape, true);
      views.table_grad = adds ? &grads : nullptr;
      views.values.push_back(views.weight_block.get());
      views.grads.push_back(views.grad_block.get());
    }
  }
  LayerParameters& own = parameters[static_cast<size_t>(layer)];
  for (const TrackedArray& value : own.values) views.values.push_back(value.get());
  for (const TrackedArray& grad : own.grads) views.grads.push_back(grad.get());
  return views;
}

void ParameterViews::add_tied_gradient(Device& device) const {
  if (grad_block && table_grad) device.add_block(*grad_block, *table_grad, block_offset);
}

}  // namespace splitbrain::exec
