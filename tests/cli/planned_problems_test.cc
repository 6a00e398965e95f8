// Which kernel problems `calibrate --model` times (tools/calibration/planned_problems.h).
#include "tools/calibration/planned_problems.h"

#include <gtest/gtest.h>

#include <set>
#include <variant>

#include "plans/plan_json.h"
#include "sim/cluster_presets.h"

namespace splitbrain::tools {
namespace {

// The batch sizes at which fashion-vgg's first convolution (one input channel) is to be timed.
std::set<int64_t> first_conv_batches(const std::vector<PlannedProblem>& problems) {
  std::set<int64_t> batches;
  for (const PlannedProblem& planned : problems) {
    const auto* conv = std::get_if<sim::ConvProblem>(&planned.problem);
    if (conv != nullptr && conv->in_channels == 1) batches.insert(conv->batch);
  }
  return batches;
}

TEST(PlannedProblems, OneDeviceTimesTheWholeBatchOnly) {
  const auto problems = planned_kernel_problems({{"fashion-vgg", 1, 64}}, sim::cluster_preset("local-cpu"));
  EXPECT_EQ(first_conv_batches(problems), (std::set<int64_t>{64}));
}

// The planner's pipeline may pick any count of sim::micro_batch_options(64, 2) = {2, 4, 8, 16}
// once the calibration changes, so each of their micro-batches is timed, not only today's pick;
// the data-parallel plans add 32 (half the batch per rank), spatial plans their own row slices.
TEST(PlannedProblems, TwoStagePipelineTimesEveryMicroBatchTheSearchTries) {
  const auto problems = planned_kernel_problems({{"fashion-vgg", 2, 64}}, sim::cluster_preset("local-cpu"));
  const std::set<int64_t> batches = first_conv_batches(problems);
  for (const int64_t micro_batch : {4, 8, 16, 32}) EXPECT_TRUE(batches.count(micro_batch)) << micro_batch;
  for (const PlannedProblem& planned : problems) EXPECT_TRUE(planned.busy_ranks == 1 || planned.busy_ranks == 2);
}

// A pipeline of two stages over two data-parallel replicas at batch 16: the search's 16
// micro-batches would give each replica half a sample, so that micro-batch is not timed (it
// was, and calibrate stopped with "extent 1 is not divisible by 2").
TEST(PlannedProblems, SkipsMicroBatchesThePlanCannotSplit) {
  const plans::Plan plan = plans::plan_from_text(R"({
    "format": "splitbrain-plan", "version": 1, "family": "pipeline 2 stages",
    "model": "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16", "batch": 16,
    "mesh": {"pipe": 2, "data": 2}, "default": {"batch": ["data"]},
    "pipeline": {"axis": "pipe", "stage_starts": ["h1.ln_1"], "micro_batches": 2, "schedule": "1f1b"}})",
                                                 "pipeline.json", ".");
  const std::vector<int64_t> micro_batches = micro_batches_to_measure(plan, plans::compile_plan(plan));
  // micro_batch_options(16, 2) = {2, 4, 8, 16} micro-batches of 8, 4, 2 and 1 samples.
  EXPECT_EQ(micro_batches, (std::vector<int64_t>{8, 4, 2}));
}

// What calibrate measures in its next round: the problems it has no time for yet, whatever the
// cache state of the times it has (it measures both states of a problem at once).
TEST(PlannedProblems, UnmeasuredLeavesOutWhatTheDeviceHasTimed) {
  const auto problems = planned_kernel_problems({{"fashion-vgg", 2, 64}}, sim::cluster_preset("local-cpu"));
  ASSERT_GE(problems.size(), 3u);
  sim::Device device;
  EXPECT_EQ(unmeasured(problems, device), problems);
  device.measured_kernels[sim::kernel_key(problems[0].problem, problems[0].busy_ranks)] = {1e-3, 1e-3, 0.0};
  device.measured_kernels[sim::kernel_key(problems[2].problem, problems[2].busy_ranks)] = {1e-3, 1e-3, 0.0};
  // Another busy count of problem 1 is another problem.
  device.measured_kernels[sim::kernel_key(problems[1].problem, problems[1].busy_ranks + 7)] = {1e-3, 1e-3, 0.0};
  std::vector<PlannedProblem> expected(problems.begin() + 1, problems.end());
  expected.erase(expected.begin() + 1);
  EXPECT_EQ(unmeasured(problems, device), expected);
}

}  // namespace
}  // namespace splitbrain::tools
