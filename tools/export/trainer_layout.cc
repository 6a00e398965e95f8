// A plan classified into the data/tensor/pipeline sizes trainers take.

#include "tools/export/trainer_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "tools/export/export_refusal.h"

namespace splitbrain::tools {
namespace {

using plans::LayerSharding;
using plans::Plan;
using plans::ShardRole;

constexpr std::array<ShardRole, plans::kShardRoleCount> kRoles = {ShardRole::batch, ShardRole::out, ShardRole::in,
                                                                  ShardRole::spatial};

const std::string& layer_name(const Plan& plan, int index) { return plan.model->layer(index).name; }

// The axes of `role` that split anything (axes of size 1 divide nothing and are left out).
std::vector<int> splitting_axes(const Plan& plan, const LayerSharding& sharding, ShardRole role) {
  std::vector<int> axes;
  for (int axis : sharding.axes(role)) {
    if (plan.mesh.axis(axis).size > 1) axes.push_back(axis);
  }
  return axes;
}

std::optional<ShardRole> role_of_axis(const LayerSharding& sharding, int axis) {
  for (ShardRole role : kRoles) {
    const auto& axes = sharding.axes(role);
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return role;
  }
  return std::nullopt;
}

// What one mesh axis does over all layers: the first layer using it in each way.
struct AxisUse {
  int batch = -1, feature = -1, spatial = -1, unused = -1;
};

AxisUse axis_use(const Plan& plan, int axis) {
  AxisUse use;
  for (int i = 0; i < plan.model->size(); ++i) {
    const auto role = role_of_axis(plan.layers[static_cast<size_t>(i)], axis);
    int& first = !role                         ? use.unused
                 : *role == ShardRole::batch   ? use.batch
                 : *role == ShardRole::spatial ? use.spatial
                                               : use.feature;
    if (first < 0) first = i;
  }
  return use;
}

std::string role_of(const Plan& plan, int layer, int axis) {
  const auto role = role_of_axis(plan.layers[static_cast<size_t>(layer)], axis);
  return std::string(role ? plans::role_name(*role) : "none");
}

// Whether `axis` splits the sequence of every layer of a GPT- or Llama-style decoder (the loss's
// positions too, or nothing of it) and nothing else: context parallelism.
bool splits_every_sequence(const Plan& plan, const TrainerLayout& layout, int axis) {
  if (!layout.gpt) return false;
  for (int i = 0; i < plan.model->size(); ++i) {
    const auto role = role_of_axis(plan.layers[static_cast<size_t>(i)], axis);
    const bool loss = plan.model->layer(i).kind == model::OpKind::softmax_cross_entropy;
    if (role != ShardRole::spatial && !(loss && !role)) return false;
  }
  return true;
}

// Whether `axis` splits the batch of every layer but the moe layers, which split their experts
// over it (`out`): expert parallelism over a data axis.
bool splits_batch_and_experts(const Plan& plan, int axis, int& first_moe) {
  first_moe = -1;
  for (int i = 0; i < plan.model->size(); ++i) {
    const auto role = role_of_axis(plan.layers[static_cast<size_t>(i)], axis);
    const bool moe = plan.model->layer(i).kind == model::OpKind::moe;
    if (moe && role == ShardRole::out) {
      if (first_moe < 0) first_moe = i;
      continue;
    }
    if (role != ShardRole::batch) return false;
  }
  return first_moe >= 0;
}

// Every axis of size > 1 but the pipeline's is a data axis (perhaps also splitting experts), the
// tensor axis or the context axis.
void classify_axes(const Plan& plan, TrainerLayout& layout) {
  for (int axis = 0; axis < plan.mesh.axis_count(); ++axis) {
    const auto& mesh_axis = plan.mesh.axis(axis);
    if (mesh_axis.size <= 1 || axis == plan.pipe_axis) continue;
    const AxisUse use = axis_use(plan, axis);
    if (splits_every_sequence(plan, layout, axis)) {
      if (layout.context_axis >= 0) {
        throw ExportRefusal(
            fmt::format("mesh: '{}' and '{}' both split every layer's sequence; trainers have one "
                        "context-parallel group",
                        plan.mesh.axis(layout.context_axis).name, mesh_axis.name));
      }
      layout.context_axis = axis;
      layout.context_parallel = mesh_axis.size;
      continue;
    }
    if (use.spatial >= 0 && use.feature < 0) {
      throw ExportRefusal(
          fmt::format("layer '{}': spatial: splits its {} over '{}' (domain parallelism); trainers "
                      "split the batch, Megatron-LM's tensor features and the pipeline only",
                      layer_name(plan, use.spatial),
                      plan.model->layer(use.spatial).output_shape.size() == 3 ? "height" : "sequence", mesh_axis.name));
    }
    int first_moe = -1;
    if (splits_batch_and_experts(plan, axis, first_moe)) {
      layout.data_axes.push_back(axis);
      layout.data_parallel *= mesh_axis.size;
      layout.expert_axes.push_back(axis);
      layout.expert_parallel *= mesh_axis.size;
      if (layout.first_expert_layer < 0) layout.first_expert_layer = first_moe;
      continue;
    }
    if (use.feature >= 0 && use.batch >= 0) {
      throw ExportRefusal(fmt::format(
          "layer '{}': batch: splits its samples over '{}' while layer '{}' splits its {} over it (a SplitBrain "
          "group); a trainer's axis splits either the batch of every layer or features",
          layer_name(plan, use.batch), mesh_axis.name, layer_name(plan, use.feature),
          role_of(plan, use.feature, axis) == "out" ? "output features" : "input features"));
    }
    if (use.feature >= 0) {
      if (layout.tensor_axis >= 0) {
        throw ExportRefusal(
            fmt::format("layer '{}': {}: splits features over '{}' as well as '{}' (a 2-D grid); "
                        "trainers have one tensor-parallel group",
                        layer_name(plan, use.feature), role_of(plan, use.feature, axis), mesh_axis.name,
                        plan.mesh.axis(layout.tensor_axis).name));
      }
      layout.tensor_axis = axis;
      layout.first_tensor_layer = use.feature;
      layout.tensor_parallel = mesh_axis.size;
      continue;
    }
    if (use.unused >= 0) {
      throw ExportRefusal(
          fmt::format("layer '{}': is replicated over '{}', which splits the batch of the other "
                      "layers; data parallelism splits every layer's batch",
                      layer_name(plan, use.unused), mesh_axis.name));
    }
    layout.data_axes.push_back(axis);
    layout.data_parallel *= mesh_axis.size;
  }
}

// Layer `index` splits features over the tensor axis exactly by `role` (and nothing else but the
// batch over the data axes and the sequence over the context axis).
bool splits_only(const Plan& plan, int index, int tensor_axis, std::optional<ShardRole> role, int context_axis) {
  const auto& sharding = plan.layers[static_cast<size_t>(index)];
  for (ShardRole r : kRoles) {
    if (r == ShardRole::batch) continue;
    auto axes = splitting_axes(plan, sharding, r);
    std::erase(axes, context_axis);
    // A moe layer's experts split over a data axis are expert parallelism, not a tensor split.
    if (r == ShardRole::out && plan.model->layer(index).kind == model::OpKind::moe) {
      std::erase_if(axes, [&](int axis) { return plan.mesh.axis(axis).size > 1 && axis != tensor_axis; });
    }
    const bool expected = role && *role == r;
    if (axes != (expected ? std::vector<int>{tensor_axis} : std::vector<int>{})) return false;
  }
  return true;
}

// "layer 'X': splits <roles>; Megatron-LM's tensor parallelism over 'T' <expected>".
std::string form_difference(const Plan& plan, int index, int tensor_axis, int context_axis, std::string_view expected) {
  const auto& sharding = plan.layers[static_cast<size_t>(index)];
  std::vector<std::string> roles;
  for (ShardRole r : {ShardRole::out, ShardRole::in, ShardRole::spatial}) {
    for (int axis : splitting_axes(plan, sharding, r)) {
      if (axis == context_axis) continue;
      roles.push_back(fmt::format("{} over '{}'", plans::role_name(r), plan.mesh.axis(axis).name));
    }
  }
  return fmt::format("layer '{}': splits {}; Megatron-LM's tensor parallelism over '{}' {}", layer_name(plan, index),
                     roles.empty() ? "nothing over it" : fmt::format("{}", fmt::join(roles, ", ")),
                     plan.mesh.axis(tensor_axis).name, expected);
}

// Where the decoder's layers are not split as Megatron-LM splits them (recorded, in model order);
// decides sequence parallelism (by the first block's norm) and whether the vocabulary is split.
void compare_with_megatron_form(const Plan& plan, TrainerLayout& layout) {
  const GptShape& gpt = *layout.gpt;
  const int t = layout.tensor_axis;
  const int c = layout.context_axis;
  auto differs = [&](int index, std::string_view expected) {
    layout.megatron_differences.push_back(form_difference(plan, index, t, c, expected));
  };
  std::optional<bool> sequence_split;  // decided by the first block's per-token layer
  auto per_token = [&](int index, bool decides) {
    const bool split = splits_only(plan, index, t, ShardRole::spatial, c);
    if (!split && !splits_only(plan, index, t, std::nullopt, c)) {
      differs(index, "splits the sequence of a per-token layer (sequence parallelism) or nothing");
    }
    if (!decides) return;
    if (!sequence_split) sequence_split = split;
    if (*sequence_split != split) {
      differs(index, fmt::format("splits the sequence of every norm, dropout and residual add of the blocks or of none "
                                 "(the first one {} it)",
                                 *sequence_split ? "splits" : "does not split"));
    }
  };
  for (int b = 0; b < gpt.layers; ++b) {
    for (int offset = 0; offset < gpt.layers_per_block(); ++offset) {
      const int index = gpt.block_starts[static_cast<size_t>(b)] + offset;
      switch (gpt.block_splits[static_cast<size_t>(offset)]) {
        case MegatronSplit::column:
          if (!splits_only(plan, index, t, ShardRole::out, c))
            differs(index, "splits its output features (column-parallel)");
          break;
        case MegatronSplit::row:
          if (!splits_only(plan, index, t, ShardRole::in, c))
            differs(index, "splits its input features (row-parallel)");
          break;
        case MegatronSplit::per_token:
          per_token(index, true);
          break;
      }
    }
  }
  for (int index : gpt.outer_per_token_layers) per_token(index, false);
  per_token(gpt.final_norm, true);
  layout.sequence_parallel = sequence_split.value_or(false);

  const int head = gpt.final_norm + 1;
  const bool table_split = splits_only(plan, 1, t, ShardRole::in, c);
  const bool table_whole = splits_only(plan, 1, t, std::nullopt, c);
  if (!table_split && !table_whole) differs(1, "splits the embedding's vocabulary rows or nothing");
  const bool head_split = splits_only(plan, head, t, ShardRole::out, c);
  const bool head_whole = splits_only(plan, head, t, std::nullopt, c);
  if (!head_split && !head_whole) differs(head, "splits the output head's vocabulary outputs or nothing");
  layout.vocabulary_split = table_split && head_split;
  if ((table_split || table_whole) && (head_split || head_whole) && !layout.vocabulary_split) {
    layout.notes.push_back(fmt::format(
        "the plan keeps {} whole on each tensor-parallel rank; Megatron-LM always splits the vocabulary of the "
        "embedding and the output head over them (less memory, an all-reduce of the embedding output)",
        table_split  ? std::string("the output head")
        : head_split ? std::string("the token embedding")
                     : std::string("the token embedding and the output head")));
  }
  if (layout.sequence_parallel != plan.regather_saved_inputs) {
    layout.notes.push_back(layout.sequence_parallel
                               ? "the plan keeps the column-parallel linears' inputs whole; Megatron-LM's sequence "
                                 "parallelism keeps them split and gathers them again in backward"
                               : "the plan's regather_saved_inputs has no counterpart without sequence parallelism");
  }
}

// Transformer layers per pipeline chunk, each counted in the chunk of its first layer. A chunk
// starting inside a transformer layer is a difference from Megatron-LM's form (it hands over
// between whole layers).
std::vector<int> layers_per_chunk(const Plan& plan, const GptShape& gpt, TrainerLayout& layout) {
  if (plan.pipe_axis < 0 || plan.stage_of_layer.empty()) return {gpt.layers};
  std::vector<int> counts(static_cast<size_t>(plan.chunk_count()), 0);
  for (int start : gpt.block_starts) ++counts[static_cast<size_t>(plan.stage_of_layer[static_cast<size_t>(start)])];
  for (int i = 1; i < plan.model->size(); ++i) {
    const int chunk = plan.stage_of_layer[static_cast<size_t>(i)];
    if (chunk == plan.stage_of_layer[static_cast<size_t>(i - 1)]) continue;
    const bool at_block = std::find(gpt.block_starts.begin(), gpt.block_starts.end(), i) != gpt.block_starts.end();
    if (!at_block) {
      layout.megatron_differences.push_back(
          fmt::format("pipeline.stage_starts: chunk {} starts at layer '{}', inside "
                      "a transformer layer; Megatron-LM cuts pipelines between whole "
                      "transformer layers",
                      chunk, layer_name(plan, i)));
    }
  }
  return counts;
}

// Trainers number ranks with the tensor-parallel group innermost, then context parallelism, then
// data parallelism, then the pipeline stages outermost (Megatron-LM's default order; DeepSpeed's
// pipe-data topology): the
// plan's mesh places its groups on the same devices only when its axes come in that order.
void note_rank_order(const Plan& plan, TrainerLayout& layout) {
  std::vector<int> order;
  if (plan.pipe_axis >= 0 && layout.pipeline_parallel > 1) order.push_back(plan.pipe_axis);
  order.insert(order.end(), layout.data_axes.begin(), layout.data_axes.end());
  if (layout.context_axis >= 0) order.push_back(layout.context_axis);
  if (layout.tensor_axis >= 0) order.push_back(layout.tensor_axis);
  if (std::is_sorted(order.begin(), order.end())) return;
  layout.notes.push_back(
      fmt::format("the trainers put the tensor-parallel ranks next to each other, then the data-parallel "
                  "replicas, then the pipeline stages; the plan's mesh {} orders its axes otherwise, "
                  "so its groups land on other devices",
                  plan.mesh.to_string()));
}

}  // namespace

TrainerLayout trainer_layout(const Plan& plan) {
  TrainerLayout layout;
  // The decoder's shape first: whether an axis splitting sequences is context parallelism depends on it.
  try {
    layout.gpt = read_decoder_shape(*plan.model);
  } catch (const ExportRefusal& e) {
    layout.not_gpt = e.what();
  }
  classify_axes(plan, layout);
  if (plan.pipe_axis >= 0) layout.pipeline_parallel = plan.stage_count();
  layout.virtual_stages = plan.virtual_stages;
  layout.micro_batches = plan.micro_batches;
  const int64_t micro_batch = plan.micro_batch_size();
  if (micro_batch % layout.data_parallel != 0) {
    throw ExportRefusal(fmt::format("batch: micro-batches of {} samples do not divide over {} data-parallel replicas",
                                    micro_batch, layout.data_parallel));
  }
  layout.micro_batch_per_replica = micro_batch / layout.data_parallel;
  if (layout.tensor_axis >= 0) {
    if (!layout.gpt) {
      const AxisUse use = axis_use(plan, layout.tensor_axis);
      throw ExportRefusal(
          fmt::format("layer '{}': {}: splits features over '{}', and trainers split features only "
                      "in Megatron-LM's transformer layers ({})",
                      layer_name(plan, use.feature), role_of(plan, use.feature, layout.tensor_axis),
                      plan.mesh.axis(layout.tensor_axis).name, layout.not_gpt));
    }
    compare_with_megatron_form(plan, layout);
  }
  if (layout.gpt) layout.layers_per_chunk = layers_per_chunk(plan, *layout.gpt, layout);
  note_rank_order(plan, layout);
  return layout;
}

}  // namespace splitbrain::tools
