#include "sim/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>

namespace splitbrain::sim {
namespace {

using nlohmann::json;

constexpr int kComputeRow = 0;
constexpr int kCommunicationRow = 1;
constexpr int kHostRow = 2;  // where the host queues ahead of the device (a GPU)
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

// The per-layer events of one pass of one stage where the timeline ran them: the kernels on the
// compute row, the collectives inside the op after them on the communication row.
void add_pass(json& events, const model::Model& net, const ScheduledPass& pass, int rank) {
  const bool forward = pass.kind == PassKind::forward;
  for (const LayerSpan& span : pass.layers) {
    const plans::StepOp op = span.recomputed ? plans::StepOp::recompute
                             : forward       ? plans::StepOp::forward
                                             : plans::StepOp::backward;
    const std::string label = plans::instruction_label(net, op, span.layer, -1, pass.micro_batch);
    if (span.compute_end_seconds > span.compute_start_seconds) {
      events.push_back(complete_event(label, "compute", rank, kComputeRow, span.compute_start_seconds,
                                      span.compute_end_seconds - span.compute_start_seconds));
    }
    if (span.end_seconds > span.compute_end_seconds) {
      events.push_back(complete_event(label, "communication", rank, kCommunicationRow, span.compute_end_seconds,
                                      span.end_seconds - span.compute_end_seconds));
    }
    if (span.host_queue_end_seconds > span.host_queue_start_seconds) {
      events.push_back(complete_event(label, "host", rank, kHostRow, span.host_queue_start_seconds,
                                      span.host_queue_end_seconds - span.host_queue_start_seconds));
    }
  }
}

// Whether the prediction has the host queue ahead of the device anywhere (a calibrated GPU).
bool host_queues(const Prediction& p) {
  return std::ranges::any_of(p.passes, [](const ScheduledPass& pass) {
    return std::ranges::any_of(
        pass.layers, [](const LayerSpan& span) { return span.host_queue_end_seconds > span.host_queue_start_seconds; });
  });
}

}  // namespace

json prediction_trace(const plans::Plan& plan, const Prediction& p, int max_ranks) {
  json events = json::array();
  const model::Model& net = *plan.model;
  const int ranks = std::min(plan.mesh.rank_count(), max_ranks);
  const bool host_row = host_queues(p);
  for (int rank = 0; rank < ranks; ++rank) {
    const int stage = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
    events.push_back(metadata("process_name", rank, -1, fmt::format("rank {} (stage {}, predicted)", rank, stage)));
    events.push_back(metadata("thread_name", rank, kComputeRow, "compute"));
    events.push_back(metadata("thread_name", rank, kCommunicationRow, "communication"));
    if (host_row) events.push_back(metadata("thread_name", rank, kHostRow, "host (queuing)"));
    for (const ScheduledPass& pass : p.passes) {
      if (pass.stage == stage) add_pass(events, net, pass, rank);
    }
    for (const SyncInterval& sync : p.gradient_sync) {
      if (sync.stage != stage || sync.end_seconds <= sync.start_seconds) continue;
      events.push_back(complete_event(plans::instruction_label(net, plans::StepOp::reduce, -1, sync.bucket, -1),
                                      "communication", rank, kCommunicationRow, sync.start_seconds,
                                      sync.end_seconds - sync.start_seconds));
    }
    for (const InstructionSpan& span : p.other_instructions) {
      if (span.stage != stage) continue;
      events.push_back(complete_event(plans::instruction_label(net, span.op, span.layer, span.bucket, span.micro_batch),
                                      "communication", rank, kCommunicationRow, span.start_seconds,
                                      span.end_seconds - span.start_seconds));
    }
    const StageTiming& timing = p.stages[static_cast<size_t>(stage)];
    events.push_back(complete_event(plans::instruction_label(net, plans::StepOp::optimizer, -1, -1, -1), "compute",
                                    rank, kComputeRow, timing.sync_end_seconds, timing.optimizer_seconds));
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace splitbrain::sim
