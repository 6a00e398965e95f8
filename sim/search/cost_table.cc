#include "sim/search/cost_table.h"

#include <fmt/format.h>

#include <stdexcept>

#include "model/statistics.h"
#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "sim/compute_cost.h"
#include "sim/plan_collective_cost.h"

namespace splitbrain::sim {
namespace {

constexpr int kRoleBits = 15;  // 3 bits of length + 4 axes x 3 bits

double sum_seconds(const Cluster& cluster, const plans::Mesh& mesh, const std::vector<plans::Collective>& list) {
  double seconds = 0.0;
  for (const plans::Collective& c : list) seconds += plan_collective_seconds(cluster, mesh, c, 0);
  return seconds;
}

}  // namespace

uint64_t sharding_code(const plans::LayerSharding& sharding) {
  uint64_t code = 0;
  int shift = 0;
  for (const std::vector<int>* list : {&sharding.batch, &sharding.out, &sharding.in, &sharding.spatial}) {
    if (list->size() > 4) throw std::logic_error("sharding_code: more than 4 axes in one role");
    uint64_t part = list->size();
    for (size_t i = 0; i < list->size(); ++i) {
      const int axis = (*list)[i];
      if (axis < 0 || axis >= 8) throw std::logic_error("sharding_code: axis index out of range");
      part |= static_cast<uint64_t>(axis) << (3 + 3 * i);
    }
    code |= part << shift;
    shift += kRoleBits;
  }
  return code;
}

CostTable::CostTable(const plans::Plan& skeleton, const Cluster& cluster, int micro_batches_in_flight)
    : skeleton_(skeleton),
      cluster_(cluster),
      in_flight_(micro_batches_in_flight),
      shape_class_(skeleton.model->alike_classes().begin(), skeleton.model->alike_classes().end()) {}

size_t ChoiceKeyHash::operator()(const LayerChoiceKey& k) const {
  return std::hash<uint64_t>{}(k.sharding * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(k.shape_class));
}

size_t ChoiceKeyHash::operator()(const EdgeChoiceKey& k) const {
  return (*this)(k.producer) * 31 + (*this)(k.consumer) * 7 + static_cast<size_t>(k.position);
}

LayerChoiceKey CostTable::layer_key(int layer, const plans::LayerSharding& sharding) const {
  return {shape_class_[static_cast<size_t>(layer)], sharding_code(sharding)};
}

const plans::LayerLayouts* CostTable::layouts(int layer, const plans::LayerSharding& sharding) {
  const LayerChoiceKey key = layer_key(layer, sharding);
  auto it = layouts_.find(key);
  if (it == layouts_.end()) {
    std::optional<plans::LayerLayouts> result;
    try {
      result =
          plans::layer_layouts(model(), layer, sharding, skeleton_.mesh, skeleton_.micro_batch_size(), skeleton_.dtype);
    } catch (const plans::PlanError&) {
      // Not a valid choice for this layer (a split that does not divide, a role it cannot take).
    }
    it = layouts_.emplace(key, std::move(result)).first;
  }
  return it->second ? &*it->second : nullptr;
}

const ChoiceCost& CostTable::layer_cost(int layer, const plans::LayerSharding& sharding) {
  return layer_cost(layer, sharding, sharding_code(sharding));
}

const ChoiceCost& CostTable::layer_cost(int layer, const plans::LayerSharding& sharding, uint64_t code) {
  const LayerChoiceKey key{shape_class_[static_cast<size_t>(layer)], code};
  if (auto it = layer_costs_.find(key); it != layer_costs_.end()) return it->second;
  ++evaluations_;
  const plans::LayerLayouts* l = layouts(layer, sharding);
  if (l == nullptr) throw std::logic_error("CostTable::layer_cost: invalid sharding");
  const model::Layer& info = model().layer(layer);
  const plans::Mesh& mesh = skeleton_.mesh;
  const int64_t micro_batch = skeleton_.micro_batch_size();

  ChoiceCost cost;
  const LayerComputeSeconds compute =
      layer_compute_seconds(cluster_, model(), layer, *l, mesh, micro_batch, skeleton_.dtype);
  cost.seconds_per_micro_batch = compute.forward + compute.backward_input + compute.backward_weight +
                                 gradient_accumulation_seconds(cluster_, skeleton_, *l) +
                                 sum_seconds(cluster_, mesh, l->forward_internal) +
                                 sum_seconds(cluster_, mesh, l->backward_internal);
  int64_t local_params = 0;
  for (const plans::ParameterShard& p : l->parameters) local_params += p.local_elements;
  const int group = mesh.group_size(l->gradient_sync_axes);
  const int64_t element_bytes = model::bytes_per_element(skeleton_.dtype);
  if (local_params > 0) {
    if (group > 1) {
      plans::Collective sync;
      sync.kind = plans::CollectiveKind::all_reduce;
      sync.axes = l->gradient_sync_axes;
      sync.group_size = group;
      sync.buffer_bytes = local_params * element_bytes;
      sync.element_bytes = element_bytes;
      cost.seconds_per_step += plan_collective_seconds(cluster_, mesh, sync, 0);
    }
    const int64_t updated = skeleton_.zero_stage >= 1 ? (local_params + group - 1) / group : local_params;
    cost.seconds_per_step += optimizer_step_seconds(cluster_, skeleton_, updated);
  }
  // Memory: parameters and gradients (sharded by ZeRO 3 and 2), optimizer state (ZeRO >= 1),
  // and this layer's kept activations for every micro-batch in flight.
  const int64_t sharded = (local_params + group - 1) / group;
  const int64_t state_bytes = plans::optimizer_state_bytes_per_parameter(skeleton_.optimizer.kind) +
                              (skeleton_.dtype == model::DType::fp32 ? 0 : 4);
  cost.fixed_bytes += (skeleton_.zero_stage >= 3 ? sharded : local_params) * element_bytes;
  cost.fixed_bytes += (skeleton_.zero_stage >= 2 ? sharded : local_params) * element_bytes;
  cost.fixed_bytes += (skeleton_.zero_stage >= 1 ? sharded : local_params) * state_bytes;
  const std::vector<int64_t> shape = plans::activation_shape(info, micro_batch);
  const double local_fraction = static_cast<double>(plans::local_element_count(l->output, mesh, shape)) /
                                static_cast<double>(model::num_elements(shape));
  const int64_t kept_output =
      model::output_kept_for_backward(model(), layer)
          ? model::num_elements(info.output_shape) * model::output_element_bytes(info, skeleton_.dtype)
          : 0;
  const double saved_per_sample =
      static_cast<double>(kept_output + info.cost.saved.extra_elements * element_bytes + info.cost.saved.extra_bytes);
  cost.activation_bytes = static_cast<int64_t>(saved_per_sample * static_cast<double>(micro_batch) * local_fraction);
  cost.memory_bytes = cost.fixed_bytes + cost.activation_bytes * in_flight_;
  return layer_costs_.emplace(key, cost).first->second;
}

double CostTable::edge_seconds(int consumer, int position, const plans::LayerSharding& producer_sharding,
                               const plans::LayerSharding& consumer_sharding) {
  return edge_seconds(consumer, position, producer_sharding, sharding_code(producer_sharding), consumer_sharding,
                      sharding_code(consumer_sharding));
}

double CostTable::edge_seconds(int consumer, int position, const plans::LayerSharding& producer_sharding,
                               uint64_t producer_code, const plans::LayerSharding& consumer_sharding,
                               uint64_t consumer_code) {
  const int producer = model().layer(consumer).inputs[static_cast<size_t>(position)];
  const EdgeChoiceKey key{{shape_class_[static_cast<size_t>(producer)], producer_code},
                          {shape_class_[static_cast<size_t>(consumer)], consumer_code},
                          position};
  if (auto it = edge_costs_.find(key); it != edge_costs_.end()) return it->second;
  ++evaluations_;
  const plans::CompiledLayer from{.stage = 0,
                                  .chunk = 0,
                                  .layouts = *layouts(producer, producer_sharding),
                                  .inputs = {},
                                  .parameter_gathers = {},
                                  .tied_copy = {}};
  const plans::CompiledLayer to{.stage = 0,
                                .chunk = 0,
                                .layouts = *layouts(consumer, consumer_sharding),
                                .inputs = {},
                                .parameter_gathers = {},
                                .tied_copy = {}};
  const plans::InputTransfer transfer = plans::compile_input(skeleton_, from, to, consumer, position);
  const double seconds = sum_seconds(cluster_, skeleton_.mesh, transfer.forward) +
                         sum_seconds(cluster_, skeleton_.mesh, transfer.backward);
  return edge_costs_.emplace(key, seconds).first->second;
}

}  // namespace splitbrain::sim
