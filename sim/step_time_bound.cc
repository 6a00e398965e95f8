#include "sim/step_time_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plans/recompute_scope.h"
#include "sim/collective_prices.h"
#include "sim/compute_cost.h"
#include "sim/simulation.h"

namespace splitbrain::sim {

StepTimeBound::StepTimeBound(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster) {
  if (!cluster.device.measured_kernels.empty()) {
    bounded_ = false;
    return;
  }
  const model::Model& net = *plan.model;
  const int layers = net.size();
  const int stages = plan.stage_count();
  std::vector<int> first_rank;
  for (int s = 0; s < stages; ++s) first_rank.push_back(first_rank_of_stage(plan, s));
  CollectivePrices prices(cluster, plan.mesh);

  layers_.resize(static_cast<size_t>(layers));
  gathers_.assign(static_cast<size_t>(stages), 0.0);
  std::vector<int> first_layer(static_cast<size_t>(stages), -1);  // per stage: its lowest layer
  for (int v = 0; v < layers; ++v) {
    const plans::CompiledLayer& layer = compiled.layers[static_cast<size_t>(v)];
    const auto stage = static_cast<size_t>(layer.stage);
    if (first_layer[stage] < 0) first_layer[stage] = v;
    LayerWork& w = layers_[static_cast<size_t>(v)];
    w.stage = layer.stage;
    if (net.layer(v).kind == model::OpKind::input) continue;  // loads its block: no compute
    w.computes = true;
    const int rank = first_rank[stage];
    const LayerComputeSeconds compute =
        layer_compute_seconds(cluster, net, v, layer.layouts, plan.mesh, compiled.micro_batch, plan.dtype);
    w.forward = compute.forward + prices.seconds_of(layer.layouts.forward_internal, rank);
    w.backward = compute.backward_input + compute.backward_weight +
                 gradient_accumulation_seconds(cluster, plan, layer.layouts) +
                 prices.seconds_of(layer.layouts.backward_internal, rank);
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      const plans::InputTransfer& input = layer.inputs[p];
      const double gathers = prices.seconds_of(input.forward, rank);
      w.forward_moves += gathers;
      if (input.gradient_flows) w.backward_moves += prices.seconds_of(input.backward, rank);
      if (plan.regather_saved_inputs && !input.forward.empty()) w.regathers.push_back({p, input.forward, gathers});
    }
    // ZeRO 3's per-pass parameter gathers run on the communication stream, posted a block ahead
    // (plans/step_compiler_gathers.cc): not on the host's path, a bound of their own.
    if (plans::gathers_parameters_per_pass(plan, layer)) {
      gathers_[stage] += 2 * prices.seconds_of(layer.parameter_gathers, rank);
    }
  }

  // The message into stage s that its first instruction waits for: the first input of its first
  // layer, when that layer receives it (nullptr: the stage may start computing at once).
  auto first_message = [&](int s) -> const plans::InputTransfer* {
    const int v = first_layer[static_cast<size_t>(s)];
    if (v < 0 || net.layer(v).kind == model::OpKind::input) return nullptr;
    const plans::CompiledLayer& layer = compiled.layers[static_cast<size_t>(v)];
    if (layer.inputs.empty()) return nullptr;
    const plans::InputTransfer& message = layer.inputs.front();
    if (!message.from_other_stage || !message.forward_send) return nullptr;
    return &message;
  };
  // The forward (or backward) seconds of stage `s`'s layers up to and including `last`.
  auto up_to = [&](int s, int last, bool forward) {
    double seconds = 0.0;
    for (int v = first_layer[static_cast<size_t>(s)]; v >= 0 && v <= last; ++v) {
      const LayerWork& w = layers_[static_cast<size_t>(v)];
      if (w.stage == s) seconds += forward ? w.forward : w.backward;
    }
    return seconds;
  };
  // A pipeline message's transfer, as its send prices it (a send of several messages, shared by
  // the layers of a stage, takes at least as long).
  auto send_seconds = [&](const plans::Collective& send, int sender_stage) {
    return prices.of(send, first_rank[static_cast<size_t>(sender_stage)]).seconds;
  };

  // start_[s]: no compute of stage s runs before this (micro-batch 0 reaching it). Producers sit
  // on earlier stages, so one pass in stage order sees them first.
  start_.assign(static_cast<size_t>(stages), 0.0);
  for (int s = 0; s < stages; ++s) {
    const plans::InputTransfer* message = first_message(s);
    if (message == nullptr) continue;
    const int from = compiled.layers[static_cast<size_t>(message->producer)].stage;
    if (from >= s) continue;
    // The message arrives a transfer after its send, which follows the producer's forward.
    start_[static_cast<size_t>(s)] = start_[static_cast<size_t>(from)] +
                                     up_to(from, message->producer, /*forward=*/true) +
                                     send_seconds(*message->forward_send, from);
  }

  // after_[s]: what stage s's host spends after its passes, in turn: ZeRO 1-2's gathers of the
  // updated parameters, bucket by bucket (plans/step_gradient_sync.h), which wait for the update.
  after_.assign(static_cast<size_t>(stages), 0.0);
  if (plan.zero_stage == 1 || plan.zero_stage == 2) {
    for (const plans::GradientBucket& bucket : compiled.buckets) {
      after_[static_cast<size_t>(bucket.stage)] +=
          prices.seconds_of(bucket.gather, first_rank[static_cast<size_t>(bucket.stage)]);
    }
  }

  // The last micro-batch's gradient leaves stage s after its last instruction of the passes (the
  // first layer's backward) and walks back down the chain of first messages.
  tail_.assign(static_cast<size_t>(stages), 0.0);
  tail_end_.assign(static_cast<size_t>(stages), 0);
  for (int s = 0; s < stages; ++s) {
    double tail = 0.0;
    int at = s;
    for (;;) {
      const plans::InputTransfer* message = first_message(at);
      if (message == nullptr || !message->backward_send) break;
      const int to = compiled.layers[static_cast<size_t>(message->producer)].stage;
      if (to >= at) break;
      tail += send_seconds(*message->backward_send, at) + up_to(to, message->producer, /*forward=*/false);
      at = to;
    }
    tail_[static_cast<size_t>(s)] = tail;
    tail_end_[static_cast<size_t>(s)] = at;
  }
  if (stages > 1) bound_messages(plan, compiled, prices, first_rank);
}

void StepTimeBound::bound_messages(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                   CollectivePrices& prices, const std::vector<int>& first_rank) {
  const auto layers = static_cast<int>(layers_.size());
  chunk_of_layer_.assign(static_cast<size_t>(layers), 0);
  for (int v = 0; v < layers && static_cast<size_t>(v) < plan.stage_of_layer.size(); ++v)
    chunk_of_layer_[static_cast<size_t>(v)] = plan.stage_of_layer[static_cast<size_t>(v)];
  // Per layer, within its chunk's pass: the forward work up to and including it (its output is
  // sent after its forward), and the backward work from the chunk's last layer down to it (its
  // input's gradient is sent after its backward and that gradient's redistribution). A chunk's
  // layers are consecutive in model order.
  std::vector<double> forward_through(static_cast<size_t>(layers), 0.0);
  std::vector<double> backward_through(static_cast<size_t>(layers), 0.0);
  const auto chunk = [&](int v) { return chunk_of_layer_[static_cast<size_t>(v)]; };
  for (int v = 0; v < layers; ++v) {
    const LayerWork& w = layers_[static_cast<size_t>(v)];
    const double before = v > 0 && chunk(v - 1) == chunk(v) ? forward_through[static_cast<size_t>(v - 1)] : 0.0;
    forward_through[static_cast<size_t>(v)] = before + w.forward + w.forward_moves;
  }
  for (int v = layers - 1; v >= 0; --v) {
    const LayerWork& w = layers_[static_cast<size_t>(v)];
    const double after =
        v + 1 < layers && chunk(v + 1) == chunk(v) ? backward_through[static_cast<size_t>(v + 1)] : 0.0;
    backward_through[static_cast<size_t>(v)] = after + w.backward + w.backward_moves;
  }
  const auto transfer = [&](const plans::Collective& send, int sender_stage) {
    return prices.of(send, first_rank[static_cast<size_t>(sender_stage)]).seconds;
  };
  for (int v = 0; v < layers; ++v) {
    for (const plans::InputTransfer& input : compiled.layers[static_cast<size_t>(v)].inputs) {
      const int u = input.producer;
      if (!input.from_other_stage) continue;
      if (input.forward_send) {
        messages_.push_back({chunk(u), chunk(v), plans::PassKind::forward, forward_through[static_cast<size_t>(u)],
                             transfer(*input.forward_send, layers_[static_cast<size_t>(u)].stage)});
      }
      if (input.backward_send) {
        messages_.push_back({chunk(v), chunk(u), plans::PassKind::backward, backward_through[static_cast<size_t>(v)],
                             transfer(*input.backward_send, layers_[static_cast<size_t>(v)].stage)});
      }
    }
  }
  const auto passes = static_cast<size_t>(2 * plan.chunk_count());
  received_by_.assign(passes, {});
  sent_by_.assign(passes, {});
  for (size_t i = 0; i < messages_.size(); ++i) {
    const Message& m = messages_[i];
    const size_t kind = m.kind == plans::PassKind::backward ? 1 : 0;
    received_by_[kind * static_cast<size_t>(plan.chunk_count()) + static_cast<size_t>(m.to_chunk)].push_back(
        static_cast<int>(i));
    sent_by_[kind * static_cast<size_t>(plan.chunk_count()) + static_cast<size_t>(m.from_chunk)].push_back(
        static_cast<int>(i));
  }
}

double StepTimeBound::pass_by_pass_seconds(const plans::Plan& variant) const {
  const auto chunks = static_cast<size_t>(variant.chunk_count());
  if (received_by_.empty() || received_by_.size() != 2 * chunks) return 0.0;
  std::vector<double> pass_seconds(2 * chunks, 0.0);  // each chunk's forward pass, then each one's backward
  const std::vector<PassWork> work = pass_work(variant);
  for (size_t v = 0; v < layers_.size(); ++v) {
    const auto c = static_cast<size_t>(chunk_of_layer_[v]);
    pass_seconds[c] += work[v].forward;
    pass_seconds[chunks + c] += work[v].backward;
  }
  // Stage by stage in schedule order, the earliest start of every pass: after the stage's pass
  // before it, and after the messages it receives have arrived (NaN: not sent yet). A stage sends
  // a message once the previous one on the same edge is done (step_compiler_internal.h: one per
  // edge in flight), waiting for it first, so a pass that sends ends no earlier than that.
  const auto micro_batches = static_cast<size_t>(variant.micro_batches);
  std::vector<double> arrival(messages_.size() * micro_batches, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> edge_free(messages_.size(), 0.0);  // when the last message on the edge arrived
  std::vector<std::vector<plans::PipelinePass>> order;
  std::vector<int> warmup;
  for (int s = 0; s < variant.stage_count(); ++s) {
    order.push_back(plans::pass_order(variant, s));
    warmup.push_back(plans::warmup_forwards(s, variant.stage_count(), variant.micro_batches, variant.schedule,
                                            variant.virtual_stages));
  }
  const auto kind_and_chunk_of = [&](const plans::PipelinePass& pass) {
    return (pass.kind == plans::PassKind::backward ? chunks : 0) + static_cast<size_t>(pass.chunk);
  };
  std::vector<size_t> next(order.size(), 0);
  std::vector<double> clock(order.size(), 0.0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t s = 0; s < order.size(); ++s) {
      for (; next[s] < order[s].size(); ++next[s]) {
        const plans::PipelinePass& pass = order[s][next[s]];
        const size_t kind_and_chunk = kind_and_chunk_of(pass);
        double start = clock[s];
        bool arrived = true;
        const auto wait_for = [&](const plans::PipelinePass& receiver) {
          for (const int m : received_by_[kind_and_chunk_of(receiver)]) {
            const double at =
                arrival[static_cast<size_t>(m) * micro_batches + static_cast<size_t>(receiver.micro_batch)];
            arrived = arrived && !std::isnan(at);
            if (arrived) start = std::max(start, at);
          }
        };
        wait_for(pass);
        if (plans::receives_next_pass_ahead(variant.schedule, warmup[s], order[s], next[s]))
          wait_for(order[s][next[s] + 1]);
        if (!arrived) break;
        const auto micro = static_cast<size_t>(pass.micro_batch);
        double end = start + pass_seconds[kind_and_chunk];
        for (const int m : sent_by_[kind_and_chunk]) {
          const Message& message = messages_[static_cast<size_t>(m)];
          double& free = edge_free[static_cast<size_t>(m)];
          end = std::max(end, free);
          free = std::max(start + message.offset_seconds, free) + message.transfer_seconds;
          arrival[static_cast<size_t>(m) * micro_batches + micro] = free;
        }
        clock[s] = end;
        progress = true;
      }
    }
  }
  double bound = 0.0;
  for (size_t s = 0; s < order.size(); ++s) {
    if (next[s] < order[s].size()) return 0.0;  // a wait no schedule has: no bound from it
    bound = std::max(bound, clock[s] + after_[s]);
  }
  return bound;
}

std::vector<StepTimeBound::PassWork> StepTimeBound::pass_work(const plans::Plan& variant) const {
  const model::Model& net = *variant.model;
  const std::vector<bool> recomputed = plans::recomputed_layers(variant);
  std::vector<PassWork> work(layers_.size());
  for (size_t v = 0; v < layers_.size(); ++v) {
    const LayerWork& w = layers_[v];
    if (!w.computes) continue;
    // Full recompute runs the forward of the layers in its scope again (every layer of a chunk, or
    // those of its first blocks), selective recompute the attention cores' (both where both apply).
    const model::Layer& layer = net.layer(static_cast<int>(v));
    const int full_recomputes = recomputed[v] ? 1 : 0;
    const int recomputes = full_recomputes + (variant.recomputes_selectively(layer) ? 1 : 0);
    work[v].forward = w.forward + w.forward_moves;
    work[v].backward = recomputes * w.forward + full_recomputes * w.forward_moves + w.backward + w.backward_moves;
    for (const LayerWork::Regather& r : w.regathers) {
      if (variant.regathers_input(layer, r.position, r.gathers)) work[v].backward += r.seconds;
    }
  }
  return work;
}

double StepTimeBound::seconds(const plans::Plan& variant) const {
  if (!bounded_) return 0.0;
  // M x every pass's instructions, per stage.
  std::vector<double> stage_seconds(start_.size(), 0.0);
  const std::vector<PassWork> work = pass_work(variant);
  for (size_t v = 0; v < layers_.size(); ++v) {
    stage_seconds[static_cast<size_t>(layers_[v].stage)] +=
        variant.micro_batches * (work[v].forward + work[v].backward);
  }
  double bound = 0.0;
  for (size_t s = 0; s < start_.size(); ++s) {
    const double passes_end = start_[s] + stage_seconds[s];
    bound = std::max({bound, passes_end + after_[s], passes_end + tail_[s] + after_[static_cast<size_t>(tail_end_[s])],
                      variant.micro_batches * gathers_[s]});
  }
  return std::max(bound, pass_by_pass_seconds(variant));
}

double iteration_seconds_lower_bound(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                     const Cluster& cluster) {
  return StepTimeBound(plan, compiled, cluster).seconds(plan);
}

}  // namespace splitbrain::sim
