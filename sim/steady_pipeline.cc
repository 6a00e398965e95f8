#include "sim/steady_pipeline.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/memory_model.h"
#include "sim/rank_traffic.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

// Two slopes this close (relative) are one line: the timelines add the same seconds in different
// orders.
constexpr double kSameSlope = 1e-9;

struct ShortCounts {
  int longer = 0;
  int shorter = 0;
};

// The first two micro-batch counts the line is drawn through; {0, 0} when the schedule has no
// steady state to repeat.
ShortCounts short_counts(const plans::Plan& plan) {
  const int stages = plan.stage_count();
  if (stages < 2) return {};
  switch (plan.schedule) {
    case plans::PipelineSchedule::one_f_one_b:
      return {stages + 2, stages + 1};
    case plans::PipelineSchedule::interleaved_one_f_one_b:
      return {3 * stages, 2 * stages};
    case plans::PipelineSchedule::gpipe:
      return {};
  }
  return {};
}

// The simulation of `plan` cut to `micro_batches` (of the same size).
Prediction cut_to(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster,
                  int micro_batches) {
  plans::Plan shorter = plan;
  shorter.micro_batches = micro_batches;
  shorter.global_batch = plan.micro_batch_size() * micro_batches;
  return simulate(shorter, compiled, cluster);
}

// Whether the full timeline is run: no steady state, kernels priced by the neighbours' load, or a
// plan too short for the doubling to save anything.
bool full_timeline(const plans::Plan& plan, ShortCounts counts, const Cluster& cluster) {
  return counts.longer == 0 || !cluster.device.measured_kernels.empty() || plan.micro_batches <= 4 * counts.longer;
}

// The line a long pipeline's step time follows: T(M) = seconds + (M - micro_batches) x slope.
struct SteadyLine {
  int micro_batches = 0;
  double seconds = 0.0;
  double slope = 0.0;
  double at(int count) const { return seconds + (count - micro_batches) * slope; }
};

// From T(longer) (`longer_seconds`, already run): the slope through the two short counts, then
// through each doubling of the count, until two slopes in a row agree; nullopt when the doublings
// reach the plan's own count first (its full timeline is then the answer).
std::optional<SteadyLine> steady_line(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                      const Cluster& cluster, ShortCounts counts, double longer_seconds) {
  int count = counts.longer;
  double seconds = longer_seconds;
  double slope = (longer_seconds - cut_to(plan, compiled, cluster, counts.shorter).iteration_seconds) /
                 (counts.longer - counts.shorter);
  while (2 * count < plan.micro_batches) {
    const double doubled = cut_to(plan, compiled, cluster, 2 * count).iteration_seconds;
    const double next_slope = (doubled - seconds) / count;
    count *= 2;
    seconds = doubled;
    if (std::abs(next_slope - slope) <= kSameSlope * std::abs(next_slope))
      return SteadyLine{count, seconds, next_slope};
    slope = next_slope;
  }
  return std::nullopt;
}

// T(M) from T(longer), as steady_line draws it, or the full timeline.
double extrapolated_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster,
                            ShortCounts counts, double longer_seconds) {
  if (const std::optional<SteadyLine> line = steady_line(plan, compiled, cluster, counts, longer_seconds)) {
    return line->at(plan.micro_batches);
  }
  return simulate(plan, compiled, cluster).iteration_seconds;
}

// `cut` (the plan's simulation cut to line.micro_batches) grown to the plan's count: every
// further micro-batch adds the slope to the step, its passes' compute to the compute phases (the
// rest of the slope to the exposed communication, or less bubble where the slope is below the
// compute), and its layers' collectives (activations, hand-overs, ZeRO 3 gathers) to the counts, from which
// the bytes each rank sends are summed again; the peaks are the cut's (it holds as many
// micro-batches in flight), and the gradient reductions and the update run once either way.
Prediction grown_to_plan(Prediction cut, const plans::Plan& plan, const Cluster& cluster, SteadyLine line) {
  const int64_t full = plan.micro_batches;
  const int64_t measured = line.micro_batches;
  const double added_seconds = line.at(plan.micro_batches) - cut.iteration_seconds;
  PhaseSeconds& phases = cut.phases;
  const double scale = static_cast<double>(full) / static_cast<double>(measured);
  const double added_compute = (phases.compute_forward + phases.compute_backward) * (scale - 1.0);
  phases.compute_forward *= scale;
  phases.compute_backward *= scale;
  const double rest = added_seconds - added_compute;
  if (rest >= 0.0) {
    phases.comm_exposed += rest;
  } else {
    const double from_bubble = std::min(phases.bubble, -rest);
    phases.bubble -= from_bubble;
    phases.comm_exposed = std::max(0.0, phases.comm_exposed - (-rest - from_bubble));
  }
  cut.iteration_seconds += added_seconds;
  cut.samples_per_second = static_cast<double>(plan.global_batch) / cut.iteration_seconds;
  // A layer's collectives run once per micro-batch (simulation.cc counts them so); the buckets'
  // reductions and gathers (layer -1) and the tied table's gradient swap once per step.
  for (CollectiveUse& use : cut.collectives) {
    if (use.layer < 0 || use.phase == StepPhase::gradient_sync) continue;
    use.count = static_cast<int>(use.count * full / measured);
  }
  std::vector<MemoryBreakdown> memory_of_stage(static_cast<size_t>(plan.stage_count()));
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    const int rank = first_rank_of_stage(plan, stage);
    for (const RankPrediction& r : cut.ranks) {
      if (r.rank == rank) memory_of_stage[static_cast<size_t>(stage)] = r.memory;
    }
  }
  cut.ranks = rank_predictions(plan, cluster, cut.collectives, memory_of_stage);
  for (StageTiming& stage : cut.stages) {
    stage.backward_end_seconds += added_seconds;
    stage.sync_end_seconds += added_seconds;
    stage.end_seconds += added_seconds;
  }
  return cut;
}

}  // namespace

double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster) {
  const ShortCounts counts = short_counts(plan);
  if (full_timeline(plan, counts, cluster)) return simulate(plan, compiled, cluster).iteration_seconds;
  const double longer = cut_to(plan, compiled, cluster, counts.longer).iteration_seconds;
  return extrapolated_seconds(plan, compiled, cluster, counts, longer);
}

Prediction steady_pipeline_prediction(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                      const Cluster& cluster) {
  const ShortCounts counts = short_counts(plan);
  if (full_timeline(plan, counts, cluster)) return simulate(plan, compiled, cluster);
  const double longer = cut_to(plan, compiled, cluster, counts.longer).iteration_seconds;
  const std::optional<SteadyLine> line = steady_line(plan, compiled, cluster, counts, longer);
  if (!line) return simulate(plan, compiled, cluster);
  return grown_to_plan(cut_to(plan, compiled, cluster, line->micro_batches), plan, cluster, *line);
}

std::optional<double> steady_pipeline_seconds_if_fits(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                                      const Cluster& cluster, int64_t limit_bytes) {
  if (!stage_fits_memory(plan, compiled, 0, limit_bytes)) return std::nullopt;
  const ShortCounts counts = short_counts(plan);
  // The full timeline walks the plan itself, whose peaks are those of its memory-equivalent cut;
  // the longer short count is that cut (1F1B: stages + 2; interleaved: 3 x stages) whenever the
  // plan is long enough for short timelines.
  const bool full = full_timeline(plan, counts, cluster);
  const Prediction first = full ? simulate(plan, compiled, cluster) : cut_to(plan, compiled, cluster, counts.longer);
  if (peak_memory_bytes(first) > limit_bytes) return std::nullopt;
  if (full) return first.iteration_seconds;
  return extrapolated_seconds(plan, compiled, cluster, counts, first.iteration_seconds);
}

}  // namespace splitbrain::sim
