#include "sim/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace splitbrain::sim {

PipelineTimeline schedule_pipeline(std::span<const StageWork> stages, int micro_batches,
                                   plans::PipelineSchedule schedule) {
  const int stage_count = static_cast<int>(stages.size());
  if (stage_count < 1 || micro_batches < 1) throw std::invalid_argument("schedule_pipeline: no stages or micro-batches");
  constexpr double kNotYet = -1.0;
  // end times per (stage, micro-batch) of each pass kind; kNotYet until scheduled
  std::vector<std::vector<double>> forward_end(static_cast<size_t>(stage_count),
                                               std::vector<double>(static_cast<size_t>(micro_batches), kNotYet));
  auto backward_end = forward_end;
  std::vector<std::vector<std::pair<PassKind, int>>> orders;
  for (int s = 0; s < stage_count; ++s) orders.push_back(pass_order(s, stage_count, micro_batches, schedule));
  std::vector<size_t> next(static_cast<size_t>(stage_count), 0);
  std::vector<double> stage_free(static_cast<size_t>(stage_count), 0.0);
  std::vector<std::vector<ScheduledPass>> per_stage(static_cast<size_t>(stage_count));

  // When is the input of a pass ready (kNotYet when its producer has not run yet)?
  auto ready_at = [&](int s, PassKind kind, int m) -> double {
    const auto S = static_cast<size_t>(s);
    const auto M = static_cast<size_t>(m);
    if (kind == PassKind::forward) {
      if (s == 0) return 0.0;
      const double end = forward_end[S - 1][M];
      return end == kNotYet ? kNotYet : end + stages[S - 1].send_forward_seconds;
    }
    if (s == stage_count - 1) return forward_end[S][M];
    const double end = backward_end[S + 1][M];
    return end == kNotYet ? kNotYet : end + stages[S + 1].send_backward_seconds;
  };

  size_t remaining = static_cast<size_t>(2 * stage_count * micro_batches);
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < stage_count; ++s) {
      const auto S = static_cast<size_t>(s);
      while (next[S] < orders[S].size()) {
        const auto [kind, m] = orders[S][next[S]];
        const double ready = ready_at(s, kind, m);
        if (ready == kNotYet) break;
        ScheduledPass pass{s, m, kind, std::max(ready, stage_free[S]), 0.0};
        pass.end_seconds = pass.start_seconds + (kind == PassKind::forward ? stages[S].forward_seconds : stages[S].backward_seconds);
        (kind == PassKind::forward ? forward_end : backward_end)[S][static_cast<size_t>(m)] = pass.end_seconds;
        stage_free[S] = pass.end_seconds;
        per_stage[S].push_back(pass);
        ++next[S];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("schedule_pipeline: the pass orders deadlock");
  }

  PipelineTimeline timeline;
  for (int s = 0; s < stage_count; ++s) {
    const auto& passes = per_stage[static_cast<size_t>(s)];
    timeline.passes.insert(timeline.passes.end(), passes.begin(), passes.end());
    timeline.stage_end_seconds.push_back(stage_free[static_cast<size_t>(s)]);
  }
  timeline.end_seconds = *std::max_element(timeline.stage_end_seconds.begin(), timeline.stage_end_seconds.end());
  return timeline;
}

}  // namespace splitbrain::sim
