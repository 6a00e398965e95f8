#include "sim/steady_pipeline.h"

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

double seconds_with(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster,
                    int micro_batches) {
  plans::Plan shorter = plan;
  shorter.micro_batches = micro_batches;
  shorter.global_batch = plan.micro_batch_size() * micro_batches;
  return simulate(shorter, compiled, cluster).iteration_seconds;
}

}  // namespace

double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster) {
  const ShortCounts counts = short_counts(plan);
  // Two short timelines cost about as much as one of their summed length.
  if (counts.longer == 0 || !cluster.device.measured_kernels.empty() ||
      plan.micro_batches <= counts.longer + counts.shorter) {
    return simulate(plan, compiled, cluster).iteration_seconds;
  }
  const double longer = seconds_with(plan, compiled, cluster, counts.longer);
  const double shorter = seconds_with(plan, compiled, cluster, counts.shorter);
  const double per_micro_batch = (longer - shorter) / (counts.longer - counts.shorter);
  return longer + (plan.micro_batches - counts.longer) * per_micro_batch;
}

}  // namespace splitbrain::sim
