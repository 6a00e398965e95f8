#include "plans/compiled_plan.h"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "model/statistics.h"
#include "plans/plan_error.h"
#include "plans/plan_validation.h"
#include "plans/redistribution.h"
#include "plans/tied_weights.h"
#include "plans/transfers.h"

namespace splitbrain::plans {
namespace {

int64_t total_local_elements(const LayerLayouts& layouts) {
  int64_t elements = 0;
  for (const ParameterShard& p : layouts.parameters) elements += p.local_elements;
  return elements;
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

Collective flat_collective(CollectiveKind kind, const Mesh& mesh, const std::vector<int>& axes, int64_t buffer_bytes,
                           int64_t element_bytes) {
  Collective c;
  c.kind = kind;
  c.axes = axes;
  c.group_size = mesh.group_size(axes);
  c.dim = kind == CollectiveKind::all_reduce ? -1 : 0;  // a flat buffer: its only dimension
  c.buffer_bytes = buffer_bytes;
  c.element_bytes = element_bytes;
  return c;
}

}  // namespace

namespace {

// The part of an input's transfer that depends only on the two layers' layouts: the
// redistributions on the consumer's stage, forward and backward.
InputTransfer input_redistributions(const Plan& plan, const LayerLayouts& from, const LayerLayouts& to, int consumer,
                                    int position) {
  const model::Model& net = *plan.model;
  const model::Layer& layer = net.layer(consumer);
  const int producer = layer.inputs[static_cast<size_t>(position)];
  const std::vector<int64_t> shape = activation_shape(net.layer(producer), plan.micro_batch_size());
  const int64_t element_bytes = model::output_element_bytes(net.layer(producer), plan.dtype);

  InputTransfer transfer;
  transfer.producer = producer;
  transfer.input_position = position;
  const TensorLayout& needed = to.inputs[static_cast<size_t>(position)];
  transfer.forward = redistribute(from.output, needed, plan.mesh, shape, element_bytes);

  // A gradient flows back when the producer, or something before it, has parameters.
  transfer.gradient_flows = layer.needs_input_gradient;
  if (transfer.gradient_flows) {
    const TensorLayout& produced = to.input_gradients[static_cast<size_t>(position)];
    transfer.backward = redistribute(produced, gradient_layout(from.output), plan.mesh, shape, element_bytes);
  }
  return transfer;
}

// The pipeline sends when the producer sits on another stage than the consumer.
void add_stage_sends(const Plan& plan, const CompiledLayer& from, const CompiledLayer& to, InputTransfer& transfer) {
  transfer.from_other_stage = from.stage != to.stage;
  if (!transfer.from_other_stage) return;
  const model::Model& net = *plan.model;
  const model::Layer& producer = net.layer(transfer.producer);
  const std::vector<int64_t> shape = activation_shape(producer, plan.micro_batch_size());
  const int64_t element_bytes = model::output_element_bytes(producer, plan.dtype);
  transfer.forward_send =
      pipeline_send(plan.mesh, plan.pipe_axis, from.stage, to.stage, from.layouts.output, shape, element_bytes);
  if (transfer.gradient_flows) {
    transfer.backward_send =
        pipeline_send(plan.mesh, plan.pipe_axis, to.stage, from.stage, from.layouts.output, shape, element_bytes);
  }
}

// compile_plan's memo. A plan fixes the mesh, the micro-batch and the dtype, so a layer's layouts
// depend only on its class of alike layers (model/alike_layers.h), its sharding and whether it
// holds a tied copy, and an edge's redistributions only on its two ends' layouts and the input
// position: each is worked out once per plan instead of once per layer of every block.
class AlikeLayerMemo {
 public:
  explicit AlikeLayerMemo(const Plan& plan) : plan_(plan), classes_(plan.model->alike_classes()) {}

  // The layouts of `layer` and an id equal for every layer whose layouts the memo shares.
  std::pair<int, const LayerLayouts*> layouts(int layer, bool holds_copy) {
    const int alike = classes_[static_cast<size_t>(layer)];
    const LayerSharding& sharding = plan_.layers[static_cast<size_t>(layer)];
    for (size_t id = 0; id < choices_.size(); ++id) {
      const Choice& c = choices_[id];
      if (c.alike_class == alike && c.holds_copy == holds_copy && *c.sharding == sharding) {
        return {static_cast<int>(id), &c.layouts};
      }
    }
    choices_.push_back(
        {alike, holds_copy, &sharding,
         layer_layouts(*plan_.model, layer, sharding, plan_.mesh, plan_.micro_batch_size(), plan_.dtype, holds_copy)});
    return {static_cast<int>(choices_.size()) - 1, &choices_.back().layouts};
  }

  InputTransfer transfer(const CompiledLayer& from, int from_id, const CompiledLayer& to, int to_id, int consumer,
                         int position) {
    const std::tuple<int, int, int> key{from_id, to_id, position};
    auto it = transfers_.find(key);
    if (it == transfers_.end()) {
      it = transfers_.emplace(key, input_redistributions(plan_, from.layouts, to.layouts, consumer, position)).first;
    }
    InputTransfer transfer = it->second;
    // Alike consumers read alike producers, but not the same one.
    transfer.producer = plan_.model->layer(consumer).inputs[static_cast<size_t>(position)];
    add_stage_sends(plan_, from, to, transfer);
    return transfer;
  }

 private:
  struct Choice {
    int alike_class;
    bool holds_copy;
    const LayerSharding* sharding;  // the plan's, which outlives the memo
    LayerLayouts layouts;
  };
  const Plan& plan_;
  std::span<const int> classes_;
  std::deque<Choice> choices_;  // a deque: the pointers layouts() returns stay valid as it grows
  std::map<std::tuple<int, int, int>, InputTransfer> transfers_;
};

}  // namespace

InputTransfer compile_input(const Plan& plan, const CompiledLayer& from, const CompiledLayer& to, int consumer,
                            int position) {
  InputTransfer transfer = input_redistributions(plan, from.layouts, to.layouts, consumer, position);
  add_stage_sends(plan, from, to, transfer);
  return transfer;
}

namespace {

std::vector<GradientBucket> compile_buckets(const Plan& plan, const std::vector<CompiledLayer>& layers) {
  const int64_t element_bytes = gradient_element_bytes(plan);
  std::vector<GradientBucket> buckets;
  auto close = [&](GradientBucket& bucket) {
    if (bucket.layers.empty()) return;
    const int group = plan.mesh.group_size(bucket.axes);
    if (group > 1) {
      if (plan.zero_stage == 0) {
        bucket.padded_elements = bucket.elements;
        bucket.reduction = {flat_collective(CollectiveKind::all_reduce, plan.mesh, bucket.axes,
                                            bucket.elements * element_bytes, element_bytes)};
      } else {
        // Stage 3 holds parameters in per-layer slices (the per-layer gathers pad each layer to
        // the group), and the reduce-scatter must hand each rank the gradients of exactly those
        // slices: the bucket is the layers' padded sizes added up. Stages 1-2 pad the bucket once.
        int64_t layer_padded = 0;
        for (int i : bucket.layers) {
          layer_padded += round_up(total_local_elements(layers[static_cast<size_t>(i)].layouts), group);
        }
        bucket.padded_elements = plan.zero_stage == 3 ? layer_padded : round_up(bucket.elements, group);
        const int64_t bytes = bucket.padded_elements * element_bytes;
        bucket.reduction = {
            flat_collective(CollectiveKind::reduce_scatter, plan.mesh, bucket.axes, bytes, element_bytes)};
        // Stages 1 and 2 keep whole parameters, so the updated slices are gathered back; stage 3
        // keeps only the slice and gathers per layer when it is needed (CompiledLayer).
        if (plan.zero_stage < 3) {
          bucket.gather = {flat_collective(CollectiveKind::all_gather, plan.mesh, bucket.axes, bytes, element_bytes)};
        }
      }
      buckets.push_back(bucket);
    }
    bucket = GradientBucket{};
  };

  GradientBucket open;
  int open_chunk = 0;
  for (int i = static_cast<int>(layers.size()) - 1; i >= 0; --i) {
    const CompiledLayer& layer = layers[static_cast<size_t>(i)];
    const int64_t elements = total_local_elements(layer.layouts);
    if (elements == 0) continue;
    const bool fits = open.layers.empty() || (open.stage == layer.stage && open_chunk == layer.chunk &&
                                              open.axes == layer.layouts.gradient_sync_axes &&
                                              open.elements * element_bytes < plan.gradient_bucket_bytes);
    if (!fits) close(open);
    if (open.layers.empty()) {
      open.stage = layer.stage;
      open_chunk = layer.chunk;
      open.axes = layer.layouts.gradient_sync_axes;
    }
    open.layers.push_back(i);
    open.elements += elements;
  }
  close(open);
  return buckets;
}

// One message per (producer, receiving stage) and direction (InputTransfer::from_other_stage):
// the sends of every later reader are dropped. The messages are alike, since a pipeline send
// depends only on the producer's layout and the two stages.
void share_stage_sends(std::vector<CompiledLayer>& layers) {
  std::set<std::pair<int, int>> forward_carried;  // (producer, receiving stage)
  std::set<std::pair<int, int>> backward_carried;
  for (CompiledLayer& layer : layers) {
    for (InputTransfer& transfer : layer.inputs) {
      if (transfer.forward_send && !forward_carried.insert({transfer.producer, layer.stage}).second) {
        transfer.forward_send.reset();
      }
      if (transfer.backward_send && !backward_carried.insert({transfer.producer, layer.stage}).second) {
        transfer.backward_send.reset();
      }
    }
  }
}

// The swap of a tied table's gradients between the table's stage and its copy's.
TiedCopy tied_copy(const Plan& plan, const CompiledLayer& head, const CompiledLayer& table, int table_index) {
  const ParameterShard& copy = head.layouts.parameters.at(0);
  const int64_t element_bytes = gradient_element_bytes(plan);
  return {.table = table_index,
          .table_stage = table.stage,
          .to_head = pipeline_send(plan.mesh, plan.pipe_axis, table.stage, head.stage, copy.layout, copy.global_shape,
                                   element_bytes),
          .to_table = pipeline_send(plan.mesh, plan.pipe_axis, head.stage, table.stage, copy.layout, copy.global_shape,
                                    element_bytes)};
}

}  // namespace

int64_t gradient_element_bytes(const Plan& plan) {
  return model::bytes_per_element(plan.gradient_dtype.value_or(plan.dtype));
}

bool zero_shards_layer(const Plan& plan, const CompiledLayer& layer) {
  return plan.zero_stage > 0 && !layer.layouts.parameters.empty() &&
         plan.mesh.group_size(layer.layouts.gradient_sync_axes) > 1;
}

bool gathers_parameters_per_pass(const Plan& plan, const CompiledLayer& layer) {
  return plan.zero_stage >= 3 && !layer.parameter_gathers.empty();
}

int shared_tied_table(const Plan& plan, const CompiledPlan& compiled, int layer) {
  const int table = plan.model->tied_table_layer(layer);
  return table >= 0 && !compiled.layers.at(static_cast<size_t>(layer)).tied_copy ? table : -1;
}

std::vector<int> parameter_gather_owners(const Plan& plan, const CompiledPlan& compiled, int layer) {
  std::vector<int> owners;
  const size_t gathers = compiled.layers.at(static_cast<size_t>(layer)).parameter_gathers.size();
  const int table = shared_tied_table(plan, compiled, layer);
  if (gathers > 0 && table >= 0 && !compiled.layers[static_cast<size_t>(table)].parameter_gathers.empty()) {
    owners.push_back(table);
  }
  if (owners.size() < gathers) owners.push_back(layer);
  return owners;
}

const Collective* own_parameter_gather(const Plan& plan, const CompiledPlan& compiled, int layer) {
  const std::vector<int> owners = parameter_gather_owners(plan, compiled, layer);
  for (size_t g = 0; g < owners.size(); ++g) {
    if (owners[g] == layer) return &compiled.layers[static_cast<size_t>(layer)].parameter_gathers[g];
  }
  return nullptr;
}

CompiledPlan compile_plan(const Plan& plan) {
  const model::Model& net = *plan.model;
  if (static_cast<int>(plan.layers.size()) != net.size()) {
    throw PlanError(fmt::format("plan: {} layer shardings for a model of {} layers", plan.layers.size(), net.size()));
  }
  if (plan.micro_batches < 1 || plan.global_batch % plan.micro_batches != 0) {
    throw PlanError(
        fmt::format("plan: micro_batches {} must divide the batch {}", plan.micro_batches, plan.global_batch));
  }
  if (const std::string problem = chunk_hand_over_problem(plan); !problem.empty()) {
    throw PlanError("plan: pipeline.stage_starts: " + problem);
  }
  if (const std::string problem = tied_weight_problem(plan); !problem.empty()) throw PlanError("plan: " + problem);
  CompiledPlan compiled;
  compiled.micro_batch = plan.micro_batch_size();
  compiled.layers.resize(static_cast<size_t>(net.size()));
  AlikeLayerMemo memo(plan);
  std::vector<int> layouts_id(static_cast<size_t>(net.size()));
  for (int i = 0; i < net.size(); ++i) {
    CompiledLayer& layer = compiled.layers[static_cast<size_t>(i)];
    layer.chunk = plan.stage_of_layer.empty() ? 0 : plan.stage_of_layer[static_cast<size_t>(i)];
    layer.stage = plan.stage_of_chunk(layer.chunk);
    const int table = net.tied_table_layer(i);
    const bool holds_copy = table >= 0 && compiled.layers[static_cast<size_t>(table)].stage != layer.stage;
    const auto [id, layouts] = memo.layouts(i, holds_copy);
    layouts_id[static_cast<size_t>(i)] = id;
    layer.layouts = *layouts;
    if (holds_copy) layer.tied_copy = tied_copy(plan, layer, compiled.layers[static_cast<size_t>(table)], table);
    for (int position = 0; position < static_cast<int>(net.layer(i).inputs.size()); ++position) {
      const int producer = net.layer(i).inputs[static_cast<size_t>(position)];
      layer.inputs.push_back(memo.transfer(compiled.layers[static_cast<size_t>(producer)],
                                           layouts_id[static_cast<size_t>(producer)], layer, id, i, position));
    }
    if (shared_tied_table(plan, compiled, i) >= 0) {
      // A tied head computes with its table: where ZeRO 3 slices the table, the head's passes
      // gather it whole too, exactly as the embedding's do (an embedding gathers only its own).
      layer.parameter_gathers = compiled.layers[static_cast<size_t>(table)].parameter_gathers;
    }
    const int64_t elements = total_local_elements(layer.layouts);
    const int group = plan.mesh.group_size(layer.layouts.gradient_sync_axes);
    if (plan.zero_stage == 3 && elements > 0 && group > 1) {
      const int64_t bytes = round_up(elements, group) * model::bytes_per_element(plan.dtype);
      layer.parameter_gathers.push_back(flat_collective(CollectiveKind::all_gather, plan.mesh,
                                                        layer.layouts.gradient_sync_axes, bytes,
                                                        model::bytes_per_element(plan.dtype)));
    }
  }
  share_stage_sends(compiled.layers);
  compiled.buckets = compile_buckets(plan, compiled.layers);
  return compiled;
}

}  // namespace splitbrain::plans
