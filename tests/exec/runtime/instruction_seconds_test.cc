// A step's seconds per instruction (micro-batches and rows together, keyed as compare keys them)
// and their medians over a run's measured steps (the warm-up left out, a missing one counted 0).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/runtime/run_report.h"
#include "exec/runtime/step_timing.h"

namespace splitbrain::exec {
namespace {

// A step whose timeline took `seconds` per instruction, named through `names` as the Trainer does.
StepResult step_with(InstructionNames& names, const InstructionSeconds& seconds) {
  std::vector<TimelineEvent> timeline;
  for (const auto& [instruction, value] : seconds) timeline.push_back({instruction + " mb0", false, 0.0, value, 0.0});
  StepResult step;
  step.seconds_by_instruction = names.seconds_of(timeline);
  return step;
}

TEST(InstructionSeconds, AStepAddsAnInstructionsMicroBatchesAndRows) {
  const std::vector<TimelineEvent> timeline = {
      {"forward conv1 mb0", false, 0.0, 0.010, 0.0},  {"forward conv1 mb1", false, 0.010, 0.012, 0.0},
      {"forward conv1 mb1", true, 0.010, 0.003, 0.0},  // its collectives, on the communication row
      {"reduce bucket 0", true, 0.020, 0.050, 0.0},   {"optimizer", false, 0.070, 0.004, 0.0},
  };
  InstructionNames names;
  const std::vector<double> seconds = names.seconds_of(timeline);
  ASSERT_EQ(names.names(), (std::vector<std::string>{"forward conv1", "reduce bucket 0", "optimizer"}));
  ASSERT_EQ(seconds.size(), 3u);
  EXPECT_DOUBLE_EQ(seconds[0], 0.025);
  EXPECT_DOUBLE_EQ(seconds[1], 0.050);
  EXPECT_DOUBLE_EQ(seconds[2], 0.004);
}

TEST(InstructionSeconds, MediansLeaveOutTheWarmUpAndOneSlowStep) {
  InstructionNames names;
  RunRecord record;
  record.warmup = 1;
  record.steps.push_back(step_with(names, {{"forward fc2", 9.0}}));  // warm-up: left out
  record.steps.push_back(step_with(names, {{"forward fc2", 0.013}, {"wait", 0.002}}));
  record.steps.push_back(step_with(names, {{"forward fc2", 0.025}}));  // a pause of the shared host
  record.steps.push_back(step_with(names, {{"forward fc2", 0.014}, {"wait", 0.001}}));
  const InstructionSeconds medians = median_seconds_by_instruction(record, names.names());
  ASSERT_EQ(medians.size(), 2u);
  EXPECT_DOUBLE_EQ(medians.at("forward fc2"), 0.014);
  // Waited in two of three steps: 0, 0.001, 0.002.
  EXPECT_DOUBLE_EQ(medians.at("wait"), 0.001);
}

TEST(InstructionSeconds, AnInstructionFirstSeenLateCountsZeroBefore) {
  InstructionNames names;
  RunRecord record;
  record.steps.push_back(step_with(names, {{"forward conv1", 0.01}}));
  record.steps.push_back(step_with(names, {{"forward conv1", 0.01}, {"wait", 0.004}}));
  record.steps.push_back(step_with(names, {{"forward conv1", 0.01}, {"wait", 0.006}}));
  record.steps.push_back(step_with(names, {{"forward conv1", 0.01}}));
  // 0, 0.004, 0.006, 0: the mean of the middle two.
  EXPECT_DOUBLE_EQ(median_seconds_by_instruction(record, names.names()).at("wait"), 0.002);
  record.warmup = 4;  // every step a warm-up: nothing measured
  EXPECT_TRUE(median_seconds_by_instruction(record, names.names()).empty());
}

}  // namespace
}  // namespace splitbrain::exec
