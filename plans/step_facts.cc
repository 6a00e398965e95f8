#include "plans/step_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/statistics.h"
#include "plans/redistribution.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {
namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

StepFacts::StepFacts(const Plan& plan, const CompiledPlan& compiled, int rank)
    : plan_(plan), compiled_(compiled), rank_(rank) {
  stage_ = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
  buckets_overlap_ = plan.overlap_gradient_sync;
  for (const GradientBucket& bucket : compiled.buckets) {
    if (bucket.stage != stage_) continue;
    buckets_overlap_ = buckets_overlap_ && bucket.reduction.size() == 1 &&
                       (bucket.reduction[0].kind == CollectiveKind::all_reduce ||
                        bucket.reduction[0].kind == CollectiveKind::reduce_scatter);
  }
  const auto layers = compiled.layers.size();
  parameters_.resize(layers);
  gradients_.resize(layers);
  bucket_of_layer_.assign(layers, -1);
  for (size_t b = 0; b < compiled.buckets.size(); ++b) {
    for (int v : compiled.buckets[b].layers) bucket_of_layer_[static_cast<size_t>(v)] = static_cast<int>(b);
  }
  gradient_slice_.assign(compiled.buckets.size(), -1);
  parameter_slice_.assign(compiled.buckets.size(), -1);
  // Every micro-batch asks the same of a layer: worked out once here (redistributions above all).
  layers_.resize(layers);
  for (int v = 0; v < static_cast<int>(layers); ++v) {
    if (!on_stage(v)) continue;
    stage_layers_.push_back(v);
    chunk_layers_[compiled.layers[static_cast<size_t>(v)].chunk].push_back(v);
    LayerFacts& facts = layers_[static_cast<size_t>(v)];
    facts.output_bytes = compute_output_bytes(v);
    facts.kept_by_op_bytes = compute_kept_by_op_bytes(v);
    facts.gradient_bytes_of_output = compute_gradient_bytes_of_output(v);
    if (plan.model->layer(v).kind == model::OpKind::input) continue;
    for (size_t p = 0; p < plan.model->layer(v).inputs.size(); ++p) {
      facts.input_redistribution.push_back(compute_input_redistribution(v, p));
      facts.gradient_redistribution.push_back(compiled.layers[static_cast<size_t>(v)].inputs[p].gradient_flows
                                                  ? compute_gradient_redistribution(v, p)
                                                  : std::vector<RedistributionStep>{});
    }
  }
}

const std::vector<int>& StepFacts::chunk_layers(int chunk) const {
  static const std::vector<int> none;
  const auto it = chunk_layers_.find(chunk);
  return it == chunk_layers_.end() ? none : it->second;
}

int StepFacts::last_local_consumer(int layer) const {
  int last = -1;
  for (int c : plan_.model->layer(layer).consumers) {
    if (on_stage(c)) last = std::max(last, c);
  }
  return last;
}

bool StepFacts::saves_input(int layer, size_t position) const {
  const std::vector<int>& saved = plan_.model->layer(layer).cost.saved.inputs;
  return std::find(saved.begin(), saved.end(), static_cast<int>(position)) != saved.end();
}

bool StepFacts::regathers_input(int layer, size_t position) const {
  std::vector<Collective> collectives;
  for (const RedistributionStep& step : input_redistribution(layer, position)) {
    if (step.collective) collectives.push_back(*step.collective);
  }
  return plan_.regathers_input(plan_.model->layer(layer), position, collectives);
}

int64_t StepFacts::compute_output_bytes(int layer) const {
  const model::Layer& l = plan_.model->layer(layer);
  return local_element_count(compiled_.layers[static_cast<size_t>(layer)].layouts.output, plan_.mesh,
                             activation_shape(l, compiled_.micro_batch)) *
         model::output_element_bytes(l, plan_.dtype);
}

int64_t StepFacts::input_bytes(int layer, size_t position) const {
  const model::Layer& producer = plan_.model->layer(plan_.model->layer(layer).inputs[position]);
  return local_element_count(compiled_.layers[static_cast<size_t>(layer)].layouts.inputs[position], plan_.mesh,
                             activation_shape(producer, compiled_.micro_batch)) *
         model::output_element_bytes(producer, plan_.dtype);
}

int64_t StepFacts::compute_kept_by_op_bytes(int layer) const {
  const model::Layer& l = plan_.model->layer(layer);
  const int64_t global_elements = compiled_.micro_batch * model::num_elements(l.output_shape);
  if (global_elements <= 0) return 0;
  const LayerLayouts& layouts = compiled_.layers[static_cast<size_t>(layer)].layouts;
  double local_fraction =
      static_cast<double>(local_element_count(layouts.output, plan_.mesh, activation_shape(l, compiled_.micro_batch))) /
      static_cast<double>(global_elements);
  if (l.kind == model::OpKind::softmax_cross_entropy) {
    // The loss keeps a row of probabilities and a label per logits row: they follow the logits'
    // split (positions of a sequence), which its per-sample output does not show.
    const std::vector<int64_t> logits = activation_shape(plan_.model->layer(l.inputs.at(0)), compiled_.micro_batch);
    local_fraction = static_cast<double>(local_element_count(layouts.inputs.at(0), plan_.mesh, logits)) /
                     static_cast<double>(model::num_elements(logits));
  }
  const int64_t element_bytes = model::bytes_per_element(plan_.dtype);
  return std::llround(static_cast<double>(compiled_.micro_batch *
                                          (l.cost.saved.extra_elements * element_bytes + l.cost.saved.extra_bytes)) *
                      local_fraction);
}

int64_t StepFacts::compute_gradient_bytes_of_output(int layer) const {
  const model::Layer& l = plan_.model->layer(layer);
  return local_element_count(compiled_.layers[static_cast<size_t>(layer)].layouts.output, plan_.mesh,
                             activation_shape(l, compiled_.micro_batch)) *
         model::bytes_per_element(plan_.dtype);
}

int64_t StepFacts::input_gradient_bytes(int layer, size_t position) const {
  const model::Layer& producer = plan_.model->layer(plan_.model->layer(layer).inputs[position]);
  return local_element_count(compiled_.layers[static_cast<size_t>(layer)].layouts.inputs[position], plan_.mesh,
                             activation_shape(producer, compiled_.micro_batch)) *
         model::bytes_per_element(plan_.dtype);
}

std::vector<RedistributionStep> StepFacts::compute_input_redistribution(int layer, size_t position) const {
  const int u = plan_.model->layer(layer).inputs[position];
  const model::Layer& producer = plan_.model->layer(u);
  return plan_redistribution(compiled_.layers[static_cast<size_t>(u)].layouts.output,
                             compiled_.layers[static_cast<size_t>(layer)].layouts.inputs[position], plan_.mesh,
                             activation_shape(producer, compiled_.micro_batch),
                             model::output_element_bytes(producer, plan_.dtype));
}

std::vector<RedistributionStep> StepFacts::compute_gradient_redistribution(int layer, size_t position) const {
  const int u = plan_.model->layer(layer).inputs[position];
  const model::Layer& producer = plan_.model->layer(u);
  return plan_redistribution(compiled_.layers[static_cast<size_t>(layer)].layouts.input_gradients[position],
                             gradient_layout(compiled_.layers[static_cast<size_t>(u)].layouts.output), plan_.mesh,
                             activation_shape(producer, compiled_.micro_batch),
                             model::output_element_bytes(producer, plan_.dtype));
}

bool StepFacts::zero_shards(int layer) const {
  return zero_shards_layer(plan_, compiled_.layers[static_cast<size_t>(layer)]);
}

int64_t StepFacts::slice_elements(size_t bucket) const {
  const GradientBucket& b = compiled_.buckets.at(bucket);
  return b.padded_elements / plan_.mesh.group_size(b.axes);
}

void StepFacts::add_model_states(ProgramWriter& writer) {
  const model::Model& net = *plan_.model;
  const int64_t element_bytes = model::bytes_per_element(plan_.dtype);
  const int64_t grad_bytes = gradient_element_bytes(plan_);
  // fp16/bf16 training keeps an fp32 master copy of the weights with the optimizer state.
  const int64_t optimizer_bytes =
      optimizer_state_bytes_per_parameter(plan_.optimizer.kind) + (plan_.dtype == model::DType::fp32 ? 0 : 4);
  for (int v = 0; v < net.size(); ++v) {
    if (!on_stage(v)) continue;
    const LayerLayouts& layouts = compiled_.layers[static_cast<size_t>(v)].layouts;
    const bool sharded = zero_shards(v);
    for (size_t k = 0; k < layouts.parameters.size(); ++k) {
      const int64_t elements = layouts.parameters[k].local_elements;
      const StepBuffer state{.layer = v, .index = static_cast<int>(k)};
      if (!(sharded && plan_.zero_stage >= 3)) {
        StepBuffer b = state;
        b.bytes = elements * element_bytes;
        b.category = MemoryCategory::params;
        b.role = BufferRole::parameter;
        parameters_[static_cast<size_t>(v)].push_back(writer.resident(b));
      }
      if (!(sharded && plan_.zero_stage >= 2)) {
        StepBuffer b = state;
        b.bytes = elements * grad_bytes;
        b.category = MemoryCategory::grads;
        b.role = BufferRole::parameter_gradient;
        gradients_[static_cast<size_t>(v)].push_back(writer.resident(b));
      }
      if (!sharded) {
        StepBuffer b = state;
        b.bytes = elements * optimizer_bytes;
        b.category = MemoryCategory::optimizer;
        b.role = BufferRole::optimizer_state;
        writer.resident(b);
      }
    }
  }
  // ZeRO: one padded slice per bucket of the stage (stage 3 pads each layer to the group).
  for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
    const GradientBucket& bucket = compiled_.buckets[b];
    if (plan_.zero_stage == 0 || bucket.stage != stage_) continue;
    const int group = plan_.mesh.group_size(bucket.axes);
    if (group <= 1) continue;
    const int64_t slice = slice_elements(b);
    writer.resident({.bytes = slice * optimizer_bytes,
                     .category = MemoryCategory::optimizer,
                     .role = BufferRole::optimizer_slice,
                     .bucket = static_cast<int>(b)});
    if (plan_.zero_stage >= 2) {
      gradient_slice_[b] = writer.resident({.bytes = slice * grad_bytes,
                                            .category = MemoryCategory::grads,
                                            .role = BufferRole::gradient_slice,
                                            .bucket = static_cast<int>(b)});
    }
    if (plan_.zero_stage >= 3) {
      int64_t elements = 0;
      for (int v : bucket.layers) {
        int64_t layer_elements = 0;
        for (const ParameterShard& shard : compiled_.layers[static_cast<size_t>(v)].layouts.parameters) {
          layer_elements += shard.local_elements;
        }
        elements += round_up(layer_elements, group) / group;
      }
      parameter_slice_[b] = writer.resident({.bytes = elements * element_bytes,
                                             .category = MemoryCategory::params,
                                             .role = BufferRole::parameter_slice,
                                             .bucket = static_cast<int>(b)});
    }
  }
}

SmallIndexList StepFacts::parameter_buffers(int layer) const {
  const auto v = static_cast<size_t>(layer);
  if (!parameters_[v].empty() || bucket_of_layer_[v] < 0) return parameters_[v];
  const int slice = parameter_slice_[static_cast<size_t>(bucket_of_layer_[v])];
  return slice < 0 ? SmallIndexList{} : SmallIndexList{slice};
}

SmallIndexList StepFacts::gradient_buffers(int layer) const { return gradients_[static_cast<size_t>(layer)]; }

}  // namespace splitbrain::plans
