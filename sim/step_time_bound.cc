#include "sim/step_time_bound.h"

#include <algorithm>
#include <vector>

#include "plans/recompute_scope.h"
#include "sim/compute_cost.h"
#include "sim/plan_collective_cost.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

// One micro-batch's host seconds of a layer's instructions, as simulation.cc prices them.
struct LayerWork {
  double forward = 0.0;   // a forward (or recompute) instruction: compute and the op's collectives
  double backward = 0.0;  // a backward instruction
  int recomputes = 0;     // recompute instructions per micro-batch
  // The redistributions before each forward (its inputs' layout changes, a ZeRO-3 parameter
  // gather) and before or after each backward (its input gradients' layout changes, the gather
  // again): a stage's timeline spends them in turn between its kernels (program_timeline.cc), and
  // a full recompute's forward runs them again (a selective one reuses the kept inputs).
  double forward_moves = 0.0;
  double backward_moves = 0.0;
};

double collectives_seconds(const Cluster& cluster, const plans::Mesh& mesh, const std::vector<plans::Collective>& list,
                           int rank) {
  double seconds = 0.0;
  for (const plans::Collective& c : list) seconds += plan_collective_seconds(cluster, mesh, c, rank);
  return seconds;
}

}  // namespace

double iteration_seconds_lower_bound(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                     const Cluster& cluster) {
  if (!cluster.device.measured_kernels.empty()) return 0.0;
  const model::Model& net = *plan.model;
  const int layers = net.size();
  const int stages = plan.stage_count();
  std::vector<int> first_rank;
  for (int s = 0; s < stages; ++s) first_rank.push_back(first_rank_of_stage(plan, s));

  std::vector<LayerWork> work(static_cast<size_t>(layers));
  std::vector<int> first_layer(static_cast<size_t>(stages), -1);        // per stage: its lowest layer
  std::vector<double> stage_seconds(static_cast<size_t>(stages), 0.0);  // M x every pass's instructions
  const std::vector<bool> recomputed = plans::recomputed_layers(plan);
  for (int v = 0; v < layers; ++v) {
    const plans::CompiledLayer& layer = compiled.layers[static_cast<size_t>(v)];
    const auto stage = static_cast<size_t>(layer.stage);
    if (first_layer[stage] < 0) first_layer[stage] = v;
    const model::Layer& info = net.layer(v);
    if (info.kind == model::OpKind::input) continue;  // loads its block: no compute
    const LayerComputeSeconds compute =
        layer_compute_seconds(cluster, net, v, layer.layouts, plan.mesh, compiled.micro_batch, plan.dtype);
    LayerWork& w = work[static_cast<size_t>(v)];
    w.forward = compute.forward;
    for (const plans::Collective& c : layer.layouts.forward_internal) {
      w.forward += plan_collective_seconds(cluster, plan.mesh, c, first_rank[stage]);
    }
    w.backward =
        compute.backward_input + compute.backward_weight + gradient_accumulation_seconds(cluster, plan, layer.layouts);
    for (const plans::Collective& c : layer.layouts.backward_internal) {
      w.backward += plan_collective_seconds(cluster, plan.mesh, c, first_rank[stage]);
    }
    for (const plans::InputTransfer& input : layer.inputs) {
      w.forward_moves += collectives_seconds(cluster, plan.mesh, input.forward, first_rank[stage]);
      if (input.gradient_flows) {
        w.backward_moves += collectives_seconds(cluster, plan.mesh, input.backward, first_rank[stage]);
      }
    }
    if (plans::gathers_parameters_per_pass(plan, layer)) {
      const double gather = collectives_seconds(cluster, plan.mesh, layer.parameter_gathers, first_rank[stage]);
      w.forward_moves += gather;
      w.backward_moves += gather;
    }
    // Full recompute runs the forward of the layers in its scope again (every layer of a chunk, or
    // those of its first blocks), selective recompute the attention cores' (both where both apply).
    const int full_recomputes = recomputed[static_cast<size_t>(v)] ? 1 : 0;
    w.recomputes = full_recomputes + (plan.recomputes_selectively(info) ? 1 : 0);
    stage_seconds[stage] += plan.micro_batches * ((1 + w.recomputes) * w.forward + w.backward +
                                                  (1 + full_recomputes) * w.forward_moves + w.backward_moves);
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
      if (compiled.layers[static_cast<size_t>(v)].stage != s) continue;
      seconds += forward ? work[static_cast<size_t>(v)].forward : work[static_cast<size_t>(v)].backward;
    }
    return seconds;
  };

  // start[s]: no compute of stage s runs before this (micro-batch 0 reaching it). Producers sit
  // on earlier stages, so one pass in stage order sees them first.
  std::vector<double> start(static_cast<size_t>(stages), 0.0);
  for (int s = 0; s < stages; ++s) {
    const plans::InputTransfer* message = first_message(s);
    if (message == nullptr) continue;
    const int from = compiled.layers[static_cast<size_t>(message->producer)].stage;
    if (from >= s) continue;
    start[static_cast<size_t>(s)] = start[static_cast<size_t>(from)] + up_to(from, message->producer, /*forward=*/true);
  }

  double bound = 0.0;
  for (int s = 0; s < stages; ++s) {
    const double passes_end = start[static_cast<size_t>(s)] + stage_seconds[static_cast<size_t>(s)];
    // The last micro-batch's gradient leaves stage s after its last instruction of the passes
    // (the first layer's backward) and walks back down the chain of first messages.
    double tail = 0.0;
    for (int at = s;;) {
      const plans::InputTransfer* message = first_message(at);
      if (message == nullptr || !message->backward_send) break;
      const int to = compiled.layers[static_cast<size_t>(message->producer)].stage;
      if (to >= at) break;
      tail += up_to(to, message->producer, /*forward=*/false);
      at = to;
    }
    bound = std::max(bound, passes_end + tail);
  }
  return bound;
}

}  // namespace splitbrain::sim
