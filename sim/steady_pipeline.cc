#include "sim/steady_pipeline.h"

#include "sim/memory_model.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

struct ShortCounts {
  int longer = 0;
  int shorter = 0;
};

// The two micro-batch counts the line is drawn through; {0, 0} when the full timeline is cheaper
// or the schedule has no steady state to repeat.
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

// T(M) from T(long) and T(short).
double extrapolated(const plans::Plan& plan, ShortCounts counts, double longer, double shorter) {
  const double per_micro_batch = (longer - shorter) / (counts.longer - counts.shorter);
  return longer + (plan.micro_batches - counts.longer) * per_micro_batch;
}

// Whether the full timeline is run rather than two short ones.
bool full_timeline(const plans::Plan& plan, ShortCounts counts, const Cluster& cluster) {
  // Two short timelines cost about as much as one of their summed length.
  return counts.longer == 0 || !cluster.device.measured_kernels.empty() ||
         plan.micro_batches <= counts.longer + counts.shorter;
}

}  // namespace

double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster) {
  const ShortCounts counts = short_counts(plan);
  if (full_timeline(plan, counts, cluster)) return simulate(plan, compiled, cluster).iteration_seconds;
  const double longer = cut_to(plan, compiled, cluster, counts.longer).iteration_seconds;
  const double shorter = cut_to(plan, compiled, cluster, counts.shorter).iteration_seconds;
  return extrapolated(plan, counts, longer, shorter);
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
  const double shorter = cut_to(plan, compiled, cluster, counts.shorter).iteration_seconds;
  return extrapolated(plan, counts, first.iteration_seconds, shorter);
}

}  // namespace splitbrain::sim
