#include "sim/step_time_bound.h"

#include <algorithm>

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
    for (const plans::InputTransfer& input : layer.inputs) {
      w.forward_moves += prices.seconds_of(input.forward, rank);
      if (input.gradient_flows) w.backward_moves += prices.seconds_of(input.backward, rank);
    }
    if (plans::gathers_parameters_per_pass(plan, layer)) {
      const double gather = prices.seconds_of(layer.parameter_gathers, rank);
      w.forward_moves += gather;
      w.backward_moves += gather;
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
}

double StepTimeBound::seconds(const plans::Plan& variant) const {
  if (!bounded_) return 0.0;
  const model::Model& net = *variant.model;
  // M x every pass's instructions, per stage.
  std::vector<double> stage_seconds(start_.size(), 0.0);
  const std::vector<bool> recomputed = plans::recomputed_layers(variant);
  for (size_t v = 0; v < layers_.size(); ++v) {
    const LayerWork& w = layers_[v];
    if (!w.computes) continue;
    // Full recompute runs the forward of the layers in its scope again (every layer of a chunk, or
    // those of its first blocks), selective recompute the attention cores' (both where both apply).
    const int full_recomputes = recomputed[v] ? 1 : 0;
    const int recomputes = full_recomputes + (variant.recomputes_selectively(net.layer(static_cast<int>(v))) ? 1 : 0);
    stage_seconds[static_cast<size_t>(w.stage)] +=
        variant.micro_batches *
        ((1 + recomputes) * w.forward + w.backward + (1 + full_recomputes) * w.forward_moves + w.backward_moves);
  }
  double bound = 0.0;
  for (size_t s = 0; s < start_.size(); ++s) {
    const double passes_end = start_[s] + stage_seconds[s];
    bound =
        std::max({bound, passes_end + after_[s], passes_end + tail_[s] + after_[static_cast<size_t>(tail_end_[s])]});
  }
  return bound;
}

double iteration_seconds_lower_bound(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                     const Cluster& cluster) {
  return StepTimeBound(plan, compiled, cluster).seconds(plan);
}

}  // namespace splitbrain::sim
