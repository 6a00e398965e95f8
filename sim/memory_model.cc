#include "sim/memory_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "model/statistics.h"
#include "plans/plan_error.h"
#include "plans/tensor_layout.h"

namespace splitbrain::sim {
namespace {

using plans::CompiledLayer;
using plans::CompiledPlan;
using plans::Plan;

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t parameter_elements(const plans::LayerLayouts& layouts) {
  int64_t elements = 0;
  for (const plans::ParameterShard& shard : layouts.parameters) elements += shard.local_elements;
  return elements;
}

// Local elements of layer `index`'s output for one micro-batch, in the layout it produces.
int64_t local_output_elements(const Plan& plan, const CompiledPlan& compiled, int index) {
  const std::vector<int64_t> shape = plans::activation_shape(plan.model->layer(index), compiled.micro_batch);
  return plans::local_element_count(compiled.layers[static_cast<size_t>(index)].layouts.output, plan.mesh, shape);
}

int64_t local_output_bytes(const Plan& plan, const CompiledPlan& compiled, int index) {
  return local_output_elements(plan, compiled, index) *
         model::output_element_bytes(plan.model->layer(index), plan.dtype);
}

bool saves_input_from(const model::Layer& consumer, int producer) {
  return std::any_of(consumer.cost.saved.inputs.begin(), consumer.cost.saved.inputs.end(),
                     [&](int position) { return consumer.inputs[static_cast<size_t>(position)] == producer; });
}

// Bytes stage `stage` keeps for backward for ONE micro-batch, without recomputation. The same
// accounting as model::compute_statistics (a kept tensor counted once, at its producer), made
// local and made pipeline-aware: a tensor is kept on a stage only if that stage's backward reads
// it, and a stage keeps the copy it received of an earlier stage's output that it reads in
// backward. With one stage this is exactly compute_statistics' saved_bytes, scaled to the shard.
int64_t saved_bytes_per_micro_batch(const Plan& plan, const CompiledPlan& compiled, int stage) {
  const model::Model& net = *plan.model;
  const int64_t element_bytes = model::bytes_per_element(plan.dtype);
  double bytes = 0.0;
  std::set<int> received;
  for (int i = 0; i < net.size(); ++i) {
    const CompiledLayer& compiled_layer = compiled.layers[static_cast<size_t>(i)];
    if (compiled_layer.stage != stage) continue;
    const model::Layer& layer = net.layer(i);
    const auto read_here_in_backward = [&](int consumer) {
      return compiled.layers[static_cast<size_t>(consumer)].stage == stage && saves_input_from(net.layer(consumer), i);
    };
    const bool kept_here = layer.cost.saved.output ||
                           std::any_of(layer.consumers.begin(), layer.consumers.end(), read_here_in_backward);
    const int64_t global_elements = compiled.micro_batch * model::num_elements(layer.output_shape);
    const int64_t local_elements = local_output_elements(plan, compiled, i);
    const int64_t global_bytes =
        (kept_here ? global_elements * model::output_element_bytes(layer, plan.dtype) : 0) +
        compiled.micro_batch * (layer.cost.saved.extra_elements * element_bytes + layer.cost.saved.extra_bytes);
    // Extras (masks, indices, probabilities) follow the output's split, like the output itself.
    if (global_elements > 0) {
      bytes += static_cast<double>(global_bytes) * static_cast<double>(local_elements) /
               static_cast<double>(global_elements);
    }
    for (const plans::InputTransfer& input : compiled_layer.inputs) {
      if (!input.forward_send || !saves_input_from(layer, input.producer)) continue;
      if (received.insert(input.producer).second) bytes += static_cast<double>(input.forward_send->buffer_bytes);
    }
  }
  return std::llround(bytes);
}

// What recomputation keeps per micro-batch in flight: the stage's inputs, i.e. the outputs it
// receives from earlier stages and the outputs of input layers it holds.
int64_t stage_input_bytes(const Plan& plan, const CompiledPlan& compiled, int stage) {
  int64_t bytes = 0;
  std::set<int> received;
  for (int i = 0; i < plan.model->size(); ++i) {
    const CompiledLayer& layer = compiled.layers[static_cast<size_t>(i)];
    if (layer.stage != stage) continue;
    if (plan.model->layer(i).kind == model::OpKind::input) bytes += local_output_bytes(plan, compiled, i);
    for (const plans::InputTransfer& input : layer.inputs) {
      if (input.forward_send && received.insert(input.producer).second) bytes += input.forward_send->buffer_bytes;
    }
  }
  return bytes;
}

int64_t largest_buffer(const std::vector<plans::Collective>& collectives) {
  int64_t largest = 0;
  for (const plans::Collective& c : collectives) largest = std::max(largest, c.buffer_bytes);
  return largest;
}

// The largest single communication buffer of the stage, per micro-batch or per step.
int64_t largest_communication_buffer(const CompiledPlan& compiled, int stage) {
  int64_t largest = 0;
  for (const CompiledLayer& layer : compiled.layers) {
    if (layer.stage != stage) continue;
    for (const plans::InputTransfer& input : layer.inputs) {
      largest = std::max({largest, largest_buffer(input.forward), largest_buffer(input.backward)});
      if (input.forward_send) largest = std::max(largest, input.forward_send->buffer_bytes);
      if (input.backward_send) largest = std::max(largest, input.backward_send->buffer_bytes);
    }
    largest = std::max({largest, largest_buffer(layer.layouts.forward_internal),
                        largest_buffer(layer.layouts.backward_internal), largest_buffer(layer.parameter_gathers)});
  }
  for (const plans::GradientBucket& bucket : compiled.buckets) {
    if (bucket.stage != stage) continue;
    largest = std::max({largest, largest_buffer(bucket.reduction), largest_buffer(bucket.gather)});
  }
  return largest;
}

}  // namespace

int micro_batches_in_flight(const Plan& plan, int stage) {
  const int stages = plan.stage_count();
  if (stage < 0 || stage >= stages) {
    throw plans::PlanError(fmt::format("stage {} is out of range: the plan has {} stage(s)", stage, stages));
  }
  if (stages == 1) return 1;  // micro-batches run forward and backward one after another
  switch (plan.schedule) {
    case plans::PipelineSchedule::gpipe: return plan.micro_batches;
    case plans::PipelineSchedule::one_f_one_b: return std::min(plan.micro_batches, stages - stage);
  }
  return plan.micro_batches;
}

MemoryBreakdown stage_memory(const Plan& plan, const CompiledPlan& compiled, int stage) {
  const int in_flight = micro_batches_in_flight(plan, stage);
  const model::Model& net = *plan.model;
  if (compiled.layers.size() != static_cast<size_t>(net.size())) {
    throw plans::PlanError(
        fmt::format("stage_memory: compiled plan has {} layers, the model {}", compiled.layers.size(), net.size()));
  }
  const int64_t element_bytes = model::bytes_per_element(plan.dtype);

  // Model states. Layers whose gradients sync over a group of one are never sharded; the others
  // are sharded by ZeRO in the padded slices the compiled buckets (stages 1-2: optimizer state,
  // gradients) and the per-layer parameter gathers (stage 3: parameters) define, so the memory
  // matches what the collectives actually hold.
  int64_t full_elements = 0;       // every local parameter of the stage
  int64_t unsharded_elements = 0;  // those ZeRO cannot shard (sync group of one)
  int64_t param_elements = 0;      // what the rank holds between steps
  for (int i = 0; i < net.size(); ++i) {
    const CompiledLayer& layer = compiled.layers[static_cast<size_t>(i)];
    if (layer.stage != stage) continue;
    const int64_t elements = parameter_elements(layer.layouts);
    const int group = plan.mesh.group_size(layer.layouts.gradient_sync_axes);
    full_elements += elements;
    if (group == 1) unsharded_elements += elements;
    param_elements += (plan.zero_stage >= 3 && group > 1) ? round_up(elements, group) / group : elements;
  }
  int64_t slice_elements = unsharded_elements;  // ZeRO's share: one padded slice per bucket
  for (const plans::GradientBucket& bucket : compiled.buckets) {
    if (bucket.stage == stage) slice_elements += bucket.padded_elements / plan.mesh.group_size(bucket.axes);
  }
  const int64_t grad_elements = plan.zero_stage >= 2 ? slice_elements : full_elements;
  const int64_t optimizer_elements = plan.zero_stage >= 1 ? slice_elements : full_elements;
  // fp16/bf16 training keeps an fp32 master copy of the weights with the optimizer state.
  const int64_t optimizer_bytes_per_element = plans::optimizer_state_bytes_per_parameter(plan.optimizer.kind) +
                                              (plan.dtype == model::DType::fp32 ? 0 : 4);

  MemoryBreakdown memory;
  memory.params = param_elements * element_bytes;
  memory.grads = grad_elements * plans::gradient_element_bytes(plan);
  memory.optimizer = optimizer_elements * optimizer_bytes_per_element;

  // Activations. Recomputation keeps only each in-flight micro-batch's stage inputs, plus one
  // micro-batch's full set while its backward recomputes it.
  const int64_t per_micro_batch = saved_bytes_per_micro_batch(plan, compiled, stage);
  memory.activations = plan.recompute_activations
                           ? stage_input_bytes(plan, compiled, stage) * in_flight + per_micro_batch
                           : per_micro_batch * in_flight;

  // Buffers: collectives run one at a time per rank in the executor, so one buffer of the
  // largest size is reused by all of them; on top of it, the working set of a backward step,
  // bounded by the largest local output (the output gradient being consumed while the input
  // gradient is written into what the activations already hold). The executor's allocator is
  // to reserve exactly these two regions.
  int64_t largest_output = 0;
  for (int i = 0; i < net.size(); ++i) {
    if (compiled.layers[static_cast<size_t>(i)].stage == stage) {
      largest_output = std::max(largest_output, local_output_bytes(plan, compiled, i));
    }
  }
  memory.buffers = largest_communication_buffer(compiled, stage) + largest_output;
  return memory;
}

}  // namespace splitbrain::sim
