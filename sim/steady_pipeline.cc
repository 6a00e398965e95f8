#include "sim/steady_pipeline.h"

#include <cmath>

#include "sim/memory_model.h"
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

// T(M) from T(longer) (`longer_seconds`, already run): the slope through the two short counts,
// then through each doubling of the count, until two slopes in a row agree; the full timeline
// when the doublings reach M first.
double extrapolated_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster,
                            ShortCounts counts, double longer_seconds) {
  int count = counts.longer;
  double seconds = longer_seconds;
  double slope = (longer_seconds - cut_to(plan, compiled, cluster, counts.shorter).iteration_seconds) /
                 (counts.longer - counts.shorter);
  while (2 * count < plan.micro_batches) {
    const double doubled = cut_to(plan, compiled, cluster, 2 * count).iteration_seconds;
    const double next_slope = (doubled - seconds) / count;
    count *= 2;
    seconds = doubled;
    if (std::abs(next_slope - slope) <= kSameSlope * std::abs(next_slope)) {
      return seconds + (plan.micro_batches - count) * next_slope;
    }
    slope = next_slope;
  }
  return simulate(plan, compiled, cluster).iteration_seconds;
}

}  // namespace

double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster) {
  const ShortCounts counts = short_counts(plan);
  if (full_timeline(plan, counts, cluster)) return simulate(plan, compiled, cluster).iteration_seconds;
  const double longer = cut_to(plan, compiled, cluster, counts.longer).iteration_seconds;
  return extrapolated_seconds(plan, compiled, cluster, counts, longer);
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
