#include "plans/tied_weights.h"

#include <fmt/format.h>

#include <algorithm>

#include "plans/op_sharding.h"

namespace splitbrain::plans {
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
AxisPart embedding_part(const LayerSharding& s, int axis) {
  if (contains(s.in, axis)) return AxisPart::rows;
  if (contains(s.out, axis)) return AxisPart::columns;
  if (contains(s.batch, axis) || contains(s.spatial, axis)) return AxisPart::samples;
  return AxisPart::none;
}

AxisPart head_part(const LayerSharding& s, int axis) {
  if (contains(s.out, axis)) return AxisPart::rows;
  if (contains(s.in, axis)) return AxisPart::columns;
  if (contains(s.batch, axis) || contains(s.spatial, axis)) return AxisPart::samples;
  return AxisPart::none;
}

bool is_prefix(const std::vector<int>& prefix, const std::vector<int>& axes) {
  return prefix.size() <= axes.size() && std::equal(prefix.begin(), prefix.end(), axes.begin());
}

int stage_of(const Plan& plan, int layer) {
  return plan.stage_of_layer.empty() ? 0 : plan.stage_of_chunk(plan.stage_of_layer[static_cast<size_t>(layer)]);
}

// The problem with one tie on one stage, or "".
std::string tie_problem(const Plan& plan, int head, int table) {
  const model::Model& net = *plan.model;
  const std::string& name = net.layer(head).name;
  const std::string& owner = net.layer(table).name;
  const LayerLayouts table_layouts = layer_layouts(net, table, plan.layers[static_cast<size_t>(table)], plan.mesh,
                                                   plan.micro_batch_size(), plan.dtype);
  const LayerSharding& head_sharding = plan.layers[static_cast<size_t>(head)];
  const LayerSharding& embedding = plan.layers[static_cast<size_t>(table)];
  for (int axis = 0; axis < plan.mesh.axis_count(); ++axis) {
    const AxisPart e = embedding_part(embedding, axis);
    const AxisPart h = head_part(head_sharding, axis);
    if (e != AxisPart::samples && h != e) {
      return fmt::format(
          "layer '{}': mesh axis '{}' {} for it but {} for '{}', whose table is its weight; sharing the "
          "table so would need communication that is not supported yet (shard '{}' like '{}')",
          name, plan.mesh.axis(axis).name, part_name(h), part_name(e), owner, owner, name);
    }
  }
  const TensorLayout needed = tied_weight_layout(head_sharding);
  const TensorLayout& held = table_layouts.parameters.at(0).layout;
  for (size_t d = 0; d < 2; ++d) {
    if (!is_prefix(held.dim_axes[d], needed.dim_axes[d])) {
      return fmt::format(
          "layer '{}': its tied weight's dimension {} is split over its axes in another order than the "
          "table of '{}'; this is not supported yet",
          name, d, owner);
    }
  }
  return "";
}

std::vector<int> sorted(std::vector<int> axes) {
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The problem with a tie across stages, or "": the two stages swap their own gradients of the
// table before reducing them, so the copy must be split like the table (the ranks that swap hold
// the same block) and reduced over the same axes (each contribution then summed once).
std::string copy_problem(const Plan& plan, int head, int table) {
  const model::Model& net = *plan.model;
  const std::string& name = net.layer(head).name;
  const std::string& owner = net.layer(table).name;
  const LayerLayouts copy = layer_layouts(net, head, plan.layers[static_cast<size_t>(head)], plan.mesh,
                                          plan.micro_batch_size(), plan.dtype, /*holds_tied_copy=*/true);
  const LayerLayouts table_layouts = layer_layouts(net, table, plan.layers[static_cast<size_t>(table)], plan.mesh,
                                                   plan.micro_batch_size(), plan.dtype);
  const TensorLayout& copy_layout = copy.parameters.at(0).layout;
  const TensorLayout& table_layout = table_layouts.parameters.at(0).layout;
  if (copy_layout.dim_axes != table_layout.dim_axes) {
    return fmt::format(
        "layer '{}': its copy of the table of '{}' (on another pipeline stage) is split {} but the table {}; "
        "the two stages could not add up their gradients block by block (shard '{}' like '{}')",
        name, owner, to_string(copy_layout, plan.mesh), to_string(table_layout, plan.mesh), owner, name);
  }
  if (sorted(copy.gradient_sync_axes) != sorted(table_layouts.gradient_sync_axes)) {
    return fmt::format(
        "layer '{}': its copy of the table of '{}' (on another pipeline stage) is reduced over other mesh axes "
        "than the table (the samples or positions are split unlike the table's); the sum of the two stages' "
        "gradients would count some twice (shard '{}' like '{}')",
        name, owner, owner, name);
  }
  return "";
}

}  // namespace

std::string tied_weight_problem(const Plan& plan) {
  const model::Model& net = *plan.model;
  for (int v = 0; v < net.size(); ++v) {
    const int table = net.tied_table_layer(v);
    if (table < 0) continue;
    const bool across = stage_of(plan, v) != stage_of(plan, table);
    if (std::string problem = across ? copy_problem(plan, v, table) : tie_problem(plan, v, table); !problem.empty())
      return problem;
  }
  return "";
}

std::optional<Plan> with_tables_following_heads(const Plan& plan) {
  Plan following = plan;
  bool changed = false;
  const model::Model& net = *plan.model;
  for (int v = 0; v < net.size(); ++v) {
    const int table = net.tied_table_layer(v);
    if (table < 0) continue;
    const LayerSharding& head = plan.layers[static_cast<size_t>(v)];
    LayerSharding& embedding = following.layers[static_cast<size_t>(table)];
    const LayerSharding like_head{.batch = head.batch, .out = head.in, .in = head.out, .spatial = head.spatial};
    if (embedding == like_head) continue;
    embedding = like_head;
    changed = true;
  }
  if (!changed) return std::nullopt;
  return following;
}

TensorLayout tied_weight_layout(const LayerSharding& head) {
  TensorLayout layout = replicated(2);
  layout.dim_axes[0] = head.out;
  layout.dim_axes[1] = head.in;
  return layout;
}

bool adds_tied_gradient(const Plan& plan, int rank, int head, int table) {
  const LayerSharding& embedding = plan.layers[static_cast<size_t>(table)];
  const LayerSharding& head_sharding = plan.layers[static_cast<size_t>(head)];
  std::vector<int> replicas;
  for (int axis = 0; axis < plan.mesh.axis_count(); ++axis) {
    if (embedding_part(embedding, axis) == AxisPart::samples && head_part(head_sharding, axis) == AxisPart::none) {
      replicas.push_back(axis);
    }
  }
  return replicas.empty() || plan.mesh.index_in_group(rank, replicas) == 0;
}

}  // namespace splitbrain::plans
