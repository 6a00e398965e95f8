#include "sim/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>

namespace splitbrain::sim {
namespace {

using nlohmann::json;

constexpr int kComputeRow = 0;
constexpr int kCommunicationRow = 1;
constexpr double kMicrosecondsPerSecond = 1e6;

json complete_event(const std::string& name, const char* category, int rank, int row, double start_seconds,
                    double seconds) {
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"pid", rank},
          {"tid", row},
          {"ts", start_seconds * kMicrosecondsPerSecond},
          {"dur", seconds * kMicrosecondsPerSecond}};
}

json metadata(const char* what, int rank, int row, const std::string& name) {
  json event = {{"name", what}, {"ph", "M"}, {"pid", rank}, {"args", {{"name", name}}}};
  if (row >= 0) event["tid"] = row;
  return event;
}

// The per-layer events of one pass of one stage, laid end to end from the pass's start.
void add_pass(json& events, const plans::Plan& plan, const plans::CompiledPlan& compiled, const Prediction& p,
              const ScheduledPass& pass, int rank) {
  const model::Model& net = *plan.model;
  const bool forward = pass.kind == PassKind::forward;
  double t = pass.start_seconds;
  const int n = static_cast<int>(compiled.layers.size());
  for (int k = 0; k < n; ++k) {
    const int i = forward ? k : n - 1 - k;
    if (compiled.layers[static_cast<size_t>(i)].chunk != pass.chunk) continue;
    const LayerTiming& timing = p.layers[static_cast<size_t>(i)];
    const std::string label = fmt::format("{} {} mb{}", forward ? "fwd" : "bwd", net.layer(i).name, pass.micro_batch);
    const double comm = forward ? timing.forward_comm_seconds : timing.backward_comm_seconds;
    const double compute =
        forward ? timing.compute.forward : timing.compute.backward_input + timing.compute.backward_weight;
    // Forward communication brings the inputs, so it precedes the compute; backward sends the
    // input gradients, so it follows it.
    auto add = [&](const char* category, int row, double seconds) {
      if (seconds <= 0) return;
      events.push_back(complete_event(label, category, rank, row, t, seconds));
      t += seconds;
    };
    if (forward) add("communication", kCommunicationRow, comm);
    add("compute", kComputeRow, compute);
    if (!forward) add("communication", kCommunicationRow, comm);
  }
}

}  // namespace

json prediction_trace(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Prediction& p,
                      int max_ranks) {
  json events = json::array();
  const int ranks = std::min(plan.mesh.rank_count(), max_ranks);
  for (int rank = 0; rank < ranks; ++rank) {
    const int stage = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
    events.push_back(metadata("process_name", rank, -1, fmt::format("rank {} (stage {}, predicted)", rank, stage)));
    events.push_back(metadata("thread_name", rank, kComputeRow, "compute"));
    events.push_back(metadata("thread_name", rank, kCommunicationRow, "communication"));
    for (const ScheduledPass& pass : p.passes) {
      if (pass.stage == stage) add_pass(events, plan, compiled, p, pass, rank);
    }
    for (const SyncInterval& sync : p.gradient_sync) {
      if (sync.stage != stage || sync.end_seconds <= sync.start_seconds) continue;
      events.push_back(complete_event(fmt::format("gradient bucket {}", sync.bucket), "communication", rank,
                                      kCommunicationRow, sync.start_seconds, sync.end_seconds - sync.start_seconds));
    }
    const StageTiming& timing = p.stages[static_cast<size_t>(stage)];
    events.push_back(complete_event("optimizer step", "compute", rank, kComputeRow, timing.sync_end_seconds,
                                    timing.optimizer_seconds));
    if (timing.gather_seconds > 0) {
      events.push_back(complete_event("gather updated parameters", "communication", rank, kCommunicationRow,
                                      timing.sync_end_seconds + timing.optimizer_seconds, timing.gather_seconds));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace splitbrain::sim
