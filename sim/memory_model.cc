#include "sim/memory_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "model/statistics.h"
#include "plans/pipeline_order.h"
#include "plans/plan_error.h"
#include "plans/redistribution.h"
#include "plans/tensor_layout.h"

namespace splitbrain::sim {
namespace {

using plans::CompiledLayer;
using plans::CompiledPlan;
using plans::Plan;

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Whether a consumer on a later stage receives layer `u`'s output: the executor's send then holds
// that array until the step ends (StageLink::finish_sends), whoever else lets go of it.
bool sent_down_the_pipeline(const model::Model& net, const CompiledPlan& compiled, int u) {
  for (int c : net.layer(u).consumers) {
    for (const plans::InputTransfer& input : compiled.layers[static_cast<size_t>(c)].inputs) {
      if (input.producer == u && input.forward_send) return true;
    }
  }
  return false;
}

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

// Whether consumer `c` reads input `position` through a redistribution (a copy in its own
// layout) rather than the producer's output array itself.
bool reads_a_copy(const Plan& plan, const CompiledPlan& compiled, int c, size_t position) {
  const int producer = plan.model->layer(c).inputs[position];
  const model::Layer& from = plan.model->layer(producer);
  return !plans::plan_redistribution(compiled.layers[static_cast<size_t>(producer)].layouts.output,
                                     compiled.layers[static_cast<size_t>(c)].layouts.inputs[position], plan.mesh,
                                     plans::activation_shape(from, compiled.micro_batch),
                                     model::output_element_bytes(from, plan.dtype))
              .empty();
}

bool saves_position(const model::Layer& layer, size_t position) {
  const std::vector<int>& saved = layer.cost.saved.inputs;
  return std::find(saved.begin(), saved.end(), static_cast<int>(position)) != saved.end();
}

// What layer `index`'s op keeps besides tensors (masks, indices, probabilities) for one
// micro-batch: per sample, split like the output.
double op_kept_bytes(const Plan& plan, const CompiledPlan& compiled, int index) {
  const model::Layer& layer = plan.model->layer(index);
  const int64_t global_elements = compiled.micro_batch * model::num_elements(layer.output_shape);
  if (global_elements <= 0) return 0.0;
  double local_fraction = static_cast<double>(local_output_elements(plan, compiled, index)) / static_cast<double>(global_elements);
  if (layer.kind == model::OpKind::softmax_cross_entropy) {
    // The loss keeps a row of probabilities and a label per logits row: they follow the logits'
    // split (positions of a sequence), which its per-sample output does not show.
    const std::vector<int64_t> logits = plans::activation_shape(plan.model->layer(layer.inputs.at(0)), compiled.micro_batch);
    local_fraction = static_cast<double>(plans::local_element_count(compiled.layers[static_cast<size_t>(index)].layouts.inputs.at(0),
                                                                     plan.mesh, logits)) /
                     static_cast<double>(model::num_elements(logits));
  }
  const int64_t element_bytes = model::bytes_per_element(plan.dtype);
  return static_cast<double>(compiled.micro_batch *
                             (layer.cost.saved.extra_elements * element_bytes + layer.cost.saved.extra_bytes)) *
         local_fraction;
}

// Per layer: the kept bytes the executor lets go after that layer's backward (the last holder
// of a tensor is the layer of smallest index among them: the backward runs in reverse). With
// `only_freed`, outputs sent down the pipeline are left out: their sends still hold them.
std::vector<double> kept_bytes_released_after(const Plan& plan, const CompiledPlan& compiled, int stage,
                                              bool only_freed = false) {
  const model::Model& net = *plan.model;
  std::vector<double> released(static_cast<size_t>(net.size()), 0.0);
  std::map<int, int> received_last_holder;  // producer on an earlier stage -> smallest holder
  std::map<int, double> received_bytes;
  for (int i = 0; i < net.size(); ++i) {
    const CompiledLayer& compiled_layer = compiled.layers[static_cast<size_t>(i)];
    if (compiled_layer.stage != stage) continue;
    const model::Layer& layer = net.layer(i);
    int last_holder = layer.cost.saved.output ? i : -1;  // of the output array itself
    for (int c : layer.consumers) {
      if (compiled.layers[static_cast<size_t>(c)].stage != stage) continue;
      const model::Layer& consumer = net.layer(c);
      for (size_t p = 0; p < consumer.inputs.size(); ++p) {
        if (consumer.inputs[p] != i || !saves_position(consumer, p)) continue;
        if (!reads_a_copy(plan, compiled, c, p)) {
          last_holder = last_holder < 0 ? c : std::min(last_holder, c);
          continue;
        }
        const std::vector<int64_t> shape = plans::activation_shape(layer, compiled.micro_batch);
        released[static_cast<size_t>(c)] += static_cast<double>(
            plans::local_element_count(compiled.layers[static_cast<size_t>(c)].layouts.inputs[p], plan.mesh, shape) *
            model::output_element_bytes(layer, plan.dtype));
      }
    }
    released[static_cast<size_t>(i)] += op_kept_bytes(plan, compiled, i);
    if (only_freed && sent_down_the_pipeline(net, compiled, i)) last_holder = -1;
    if (last_holder >= 0) released[static_cast<size_t>(last_holder)] += static_cast<double>(local_output_bytes(plan, compiled, i));
    for (size_t p = 0; p < compiled_layer.inputs.size(); ++p) {
      const plans::InputTransfer& input = compiled_layer.inputs[p];
      if (!input.forward_send || !saves_position(layer, p)) continue;
      if (reads_a_copy(plan, compiled, i, p)) {  // what it keeps is its own redistributed copy
        const model::Layer& producer = net.layer(input.producer);
        released[static_cast<size_t>(i)] += static_cast<double>(
            plans::local_element_count(compiled_layer.layouts.inputs[p], plan.mesh,
                                       plans::activation_shape(producer, compiled.micro_batch)) *
            model::output_element_bytes(producer, plan.dtype));
        continue;
      }
      const auto [it, first] = received_last_holder.try_emplace(input.producer, i);
      if (!first) it->second = std::min(it->second, i);
      received_bytes[input.producer] = static_cast<double>(input.forward_send->buffer_bytes);
    }
  }
  for (const auto& [producer, holder] : received_last_holder) released[static_cast<size_t>(holder)] += received_bytes.at(producer);
  return released;
}

// The most activation bytes alive at once during ONE micro-batch's forward on `stage`, as the
// executor holds them (exec/runtime/trainer.cc, activation_release.cc): a layer's output is
// allocated before it runs, beside its inputs (the producer's array itself, or its own
// redistributed or received copy); after the layer, inputs it does not save go, and so does a
// producer's output after its last consumer here unless it saves it; outputs sent down the
// pipeline stay held by the send until the step ends. This can exceed what is kept for backward:
// transients (a gathered copy, an output its consumer has not yet read) peak during the forward.
int64_t forward_live_peak_bytes(const Plan& plan, const CompiledPlan& compiled, int stage) {
  const model::Model& net = *plan.model;
  struct Array {
    double bytes = 0.0;
    int holders = 0;
  };
  std::vector<Array> arrays;
  double live = 0.0;
  double peak = 0.0;
  auto make = [&](double bytes) {
    arrays.push_back({bytes, 1});
    live += bytes;
    return arrays.size() - 1;
  };
  auto drop = [&](size_t id) {
    if (--arrays[id].holders == 0) live -= arrays[id].bytes;
  };
  auto on_stage = [&](int layer) { return compiled.layers[static_cast<size_t>(layer)].stage == stage; };
  auto last_local_consumer = [&](int u) {
    int last = -1;
    for (int c : net.layer(u).consumers) {
      if (on_stage(c)) last = std::max(last, c);
    }
    return last;
  };
  std::vector<size_t> output_array(static_cast<size_t>(net.size()));
  std::vector<bool> output_held(static_cast<size_t>(net.size()), false);  // by the stage's list of outputs
  auto release_output = [&](int u) {
    if (!output_held[static_cast<size_t>(u)] || net.layer(u).cost.saved.output) return;
    // Recompute runs the forward again from the stage's inputs: those stay.
    if (plan.recompute_activations && net.layer(u).kind == model::OpKind::input) return;
    output_held[static_cast<size_t>(u)] = false;
    drop(output_array[static_cast<size_t>(u)]);
  };
  for (int v = 0; v < net.size(); ++v) {
    if (!on_stage(v)) continue;
    const model::Layer& layer = net.layer(v);
    const CompiledLayer& compiled_layer = compiled.layers[static_cast<size_t>(v)];
    std::vector<size_t> inputs;
    if (layer.kind != model::OpKind::input) {
      for (size_t p = 0; p < layer.inputs.size(); ++p) {
        const int u = layer.inputs[p];
        const plans::InputTransfer& transfer = compiled_layer.inputs[p];
        if (reads_a_copy(plan, compiled, v, p)) {
          const model::Layer& producer = net.layer(u);
          inputs.push_back(make(static_cast<double>(
              plans::local_element_count(compiled_layer.layouts.inputs[p], plan.mesh, plans::activation_shape(producer, compiled.micro_batch)) *
              model::output_element_bytes(producer, plan.dtype))));
        } else if (transfer.forward_send) {
          inputs.push_back(make(static_cast<double>(transfer.forward_send->buffer_bytes)));
        } else {
          inputs.push_back(output_array[static_cast<size_t>(u)]);
          ++arrays[inputs.back()].holders;
        }
      }
    }
    output_array[static_cast<size_t>(v)] = make(static_cast<double>(local_output_bytes(plan, compiled, v)));
    output_held[static_cast<size_t>(v)] = true;
    if (sent_down_the_pipeline(net, compiled, v)) ++arrays[output_array[static_cast<size_t>(v)]].holders;
    live += op_kept_bytes(plan, compiled, v);
    peak = std::max(peak, live);
    for (size_t p = 0; p < inputs.size(); ++p) {
      if (!saves_position(layer, p)) drop(inputs[p]);
    }
    for (int u : layer.inputs) {
      if (on_stage(u) && last_local_consumer(u) == v) release_output(u);
    }
    if (last_local_consumer(v) < 0) release_output(v);
  }
  return std::llround(peak);
}

// Bytes stage `stage` keeps for backward for ONE micro-batch, without recomputation, as the
// executor keeps them (exec/runtime/activation_release.cc): a producer's output once if it saves
// it or a consumer saves it as it is; a consumer's own copy where it saves an input it received
// redistributed (a gathered or re-split copy); the copy received from an earlier stage where a
// layer saves it; and what ops keep besides (masks, indices), split like their outputs. A tensor
// is kept on a stage only if that stage's backward reads it. With one stage and no
// redistribution this is exactly model::compute_statistics' saved_bytes, scaled to the shard.
// `released_after` is kept_bytes_released_after's answer: the same bytes, by releasing layer.
int64_t saved_bytes_per_micro_batch(const std::vector<double>& released_after) {
  double bytes = 0.0;
  for (double b : released_after) bytes += b;
  return std::llround(bytes);
}

// Outputs a stage sends down the pipeline and does not keep for its own backward: the
// executor's non-blocking sends hold them until the step ends (StageLink::finish_sends).
int64_t unkept_forward_send_bytes(const Plan& plan, const CompiledPlan& compiled, int stage) {
  const model::Model& net = *plan.model;
  int64_t bytes = 0;
  for (int i = 0; i < net.size(); ++i) {
    if (compiled.layers[static_cast<size_t>(i)].stage != stage || net.layer(i).cost.saved.output) continue;
    bool sent = false;
    bool saved_here = false;
    for (int c : net.layer(i).consumers) {
      const CompiledLayer& consumer = compiled.layers[static_cast<size_t>(c)];
      for (size_t p = 0; p < consumer.inputs.size(); ++p) {
        if (consumer.inputs[p].producer != i) continue;
        sent = sent || consumer.inputs[p].forward_send.has_value();
        saved_here = saved_here || (consumer.stage == stage && saves_position(net.layer(c), p) && !reads_a_copy(plan, compiled, c, p));
      }
    }
    if (sent && !saved_here) bytes += local_output_bytes(plan, compiled, i);
  }
  return bytes;
}

// Every output a stage sends down the pipeline, kept for its own backward or not: the sends hold
// them until the step ends, past the backward that lets go of what the stage kept.
int64_t forward_send_bytes(const Plan& plan, const CompiledPlan& compiled, int stage) {
  const model::Model& net = *plan.model;
  int64_t bytes = 0;
  for (int i = 0; i < net.size(); ++i) {
    if (compiled.layers[static_cast<size_t>(i)].stage == stage && sent_down_the_pipeline(net, compiled, i)) {
      bytes += local_output_bytes(plan, compiled, i);
    }
  }
  return bytes;
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

// Whether the executor overlaps this stage's gradient buckets with the backward pass: when the
// plan asks for it and every bucket is one all-reduce or one (ZeRO) reduce-scatter, the calls
// MPI has a non-blocking form of (exec/runtime/trainer.cc).
bool buckets_overlap(const Plan& plan, const CompiledPlan& compiled, int stage) {
  bool overlap = plan.overlap_gradient_sync;
  for (const plans::GradientBucket& bucket : compiled.buckets) {
    if (bucket.stage != stage) continue;
    overlap = overlap && bucket.reduction.size() == 1 &&
              (bucket.reduction[0].kind == plans::CollectiveKind::all_reduce ||
               bucket.reduction[0].kind == plans::CollectiveKind::reduce_scatter);
  }
  return overlap;
}

// The transient memory of a stage, as the executor holds it: the backward pass's working set —
// the output gradients alive (the layer's own and those accumulated for producers not yet
// reached: skip connections keep theirs), plus the input gradients the layer is writing — and
// the flat gradient buckets: all of those already started in the last backward when they overlap
// with it, else one at a time after it. ZeRO 3's gathered parameters come on top, one layer's at
// a time. Gradients are fp32 in the executor, as element_bytes says for fp32 plans.
// `together` is the most activations and transients held at once: a backward starts with every
// kept byte (`kept_at_backward_start`) and lets go of `released_after[v]` after layer v.
struct Transients {
  int64_t buffers = 0;
  int64_t together = 0;
};

Transients transient_bytes(const Plan& plan, const CompiledPlan& compiled, int stage, int64_t kept_at_backward_start,
                           const std::vector<double>& released_after) {
  const model::Model& net = *plan.model;
  const int64_t element_bytes = model::bytes_per_element(plan.dtype);
  const bool overlap = buckets_overlap(plan, compiled, stage);
  auto bucket_bytes = [](const plans::GradientBucket& bucket) { return bucket.padded_elements * 4; };
  std::map<int, int64_t> alive;  // output gradients by layer
  int64_t alive_bytes = 0;
  int64_t started_buckets = 0;
  double kept = static_cast<double>(kept_at_backward_start);
  Transients peak;
  auto note = [&](int64_t transient) {
    peak.buffers = std::max(peak.buffers, transient);
    peak.together = std::max<int64_t>(peak.together, std::llround(kept) + transient);
  };
  for (int v = net.size() - 1; v >= 0; --v) {
    const CompiledLayer& layer = compiled.layers[static_cast<size_t>(v)];
    if (layer.stage != stage || net.layer(v).kind == model::OpKind::input) continue;
    if (alive.emplace(v, local_output_elements(plan, compiled, v) * element_bytes).second) alive_bytes += alive.at(v);
    std::vector<int64_t> input_grads;
    if (net.layer(v).needs_input_gradient) {
      for (size_t p = 0; p < layer.inputs.size(); ++p) {
        const model::Layer& producer = net.layer(net.layer(v).inputs[p]);
        input_grads.push_back(plans::local_element_count(layer.layouts.inputs[p], plan.mesh,
                                                         plans::activation_shape(producer, compiled.micro_batch)) *
                              element_bytes);
      }
    }
    int64_t writing = 0;
    for (int64_t b : input_grads) writing += b;
    note(alive_bytes + writing + started_buckets);
    kept -= released_after[static_cast<size_t>(v)];  // the op lets go of what it kept
    for (size_t p = 0; p < input_grads.size(); ++p) {
      const plans::InputTransfer& input = layer.inputs[p];
      writing -= input_grads[p];
      if (!input.gradient_flows || input.backward_send) continue;
      const int64_t redistributed = local_output_elements(plan, compiled, input.producer) * element_bytes;
      if (alive.emplace(input.producer, redistributed).second) alive_bytes += redistributed;
      note(alive_bytes + writing + started_buckets);
    }
    alive_bytes -= alive.at(v);
    alive.erase(v);
    if (!overlap) continue;
    for (const plans::GradientBucket& bucket : compiled.buckets) {
      if (bucket.stage == stage && bucket.layers.back() == v) started_buckets += bucket_bytes(bucket);
    }
    note(alive_bytes + started_buckets);
  }
  if (!overlap) {
    for (const plans::GradientBucket& bucket : compiled.buckets) {
      if (bucket.stage == stage) note(bucket_bytes(bucket));
    }
  }
  int64_t largest_gather = 0;
  for (const CompiledLayer& layer : compiled.layers) {
    if (layer.stage == stage) largest_gather = std::max(largest_gather, largest_buffer(layer.parameter_gathers));
  }
  peak.buffers += largest_gather;
  peak.together = std::max(peak.together, kept_at_backward_start) + largest_gather;
  return peak;
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

  // Activations, over the stage's passes in the order the executor runs them (plans::pass_order).
  // A forward leaves its micro-batch's kept tensors behind (under recompute only the stage's
  // inputs) and the outputs it sent down the pipeline, which the sends hold until the step ends;
  // its backward lets go of the kept tensors but not of the sent ones. The category peaks at the
  // start of a backward (under recompute with one micro-batch's full set rebuilt on top) or
  // during a forward, with that forward's own transients on top of what is held before it.
  const std::vector<double> released_after = kept_bytes_released_after(plan, compiled, stage);
  const int64_t per_micro_batch = saved_bytes_per_micro_batch(released_after);
  const int64_t sent = forward_send_bytes(plan, compiled, stage);
  const int64_t held_after_forward = plan.recompute_activations
                                         ? stage_input_bytes(plan, compiled, stage) + sent
                                         : per_micro_batch + unkept_forward_send_bytes(plan, compiled, stage);
  const int64_t rebuilt_in_backward = plan.recompute_activations ? per_micro_batch : 0;
  const int64_t forward_transients = forward_live_peak_bytes(plan, compiled, stage);
  int64_t held = 0;
  for (const auto& [kind, micro] : plans::pass_order(stage, plan.stage_count(), plan.micro_batches, plan.schedule)) {
    if (kind == plans::PassKind::forward) {
      memory.activations_in_forward = std::max(memory.activations_in_forward, held + forward_transients);
      held += held_after_forward;
    } else {
      memory.activations = std::max(memory.activations, held + rebuilt_in_backward);
      held += sent - held_after_forward;
    }
  }

  // Buffers: the backward's working set and the gradient buckets (transient_bytes), beside the
  // activations held when the worst backward starts.
  // What the backward frees: not the outputs the sends hold (a recomputed copy was never sent).
  const Transients transients = transient_bytes(
      plan, compiled, stage, memory.activations,
      kept_bytes_released_after(plan, compiled, stage, /*only_freed=*/!plan.recompute_activations));
  memory.buffers = transients.buffers;
  memory.activations_and_buffers_at_once = transients.together;
  return memory;
}

}  // namespace splitbrain::sim
