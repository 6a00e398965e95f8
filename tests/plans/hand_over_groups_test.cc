// Pipeline hand-overs over a rendezvous transport (NCCL), walked on the compiled step programs:
// GPipe and 1F1B programs complete with every send grouped with the next receive, at any number
// of micro-batches; interleaved 1F1B's stall, and the stall names where each stage waits; a plan
// without a pipeline has nothing to walk. The executor's side (the same rules on MPI synchronous
// sends with one tag) runs in the scrambled equivalence suites.

#include "plans/hand_over_groups.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan_json.h"
#include "plans/step_compiler.h"
#include "tests/support/test_plans.h"

namespace splitbrain::plans {
namespace {

namespace fs = std::filesystem;

// Stage s's program on the ranks of data replica 0.
std::vector<StepProgram> stage_programs(const Plan& plan) {
  const CompiledPlan compiled = compile_plan(plan);
  std::vector<StepProgram> programs;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    std::vector<int> coordinates(plan.mesh.axes().size(), 0);
    coordinates[static_cast<size_t>(plan.pipe_axis)] = stage;
    programs.push_back(compile_step(plan, compiled, plan.mesh.rank_of(coordinates)));
  }
  return programs;
}
const fs::path kExamples = fs::path(__FILE__).parent_path().parent_path().parent_path() / "plans" / "examples";

TEST(HandOverGroups, GPipeAnd1F1BCompleteAtAnyMicroBatchCount) {
  const Plan example = load_plan_file((kExamples / "vgg16-cifar10-pipeline-4.json").string());
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (const int micro_batches : {1, 2, 4, 8}) {
      Plan plan = example;
      plan.schedule = schedule;
      plan.micro_batches = micro_batches;
      SCOPED_TRACE(std::to_string(micro_batches) + " micro-batches, schedule " +
                   std::to_string(static_cast<int>(schedule)));
      const auto stall = stall_of_grouped_hand_overs(stage_programs(plan));
      EXPECT_FALSE(stall.has_value()) << (stall ? stall->message : "");
      EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan))) << "training and evaluation";
    }
  }
}

TEST(HandOverGroups, Interleaved1F1BStallsAndSaysWhere) {
  const Plan plan = load_plan_file((kExamples / "vgg16-cifar10-interleaved-4.json").string());
  const auto stall = stall_of_grouped_hand_overs(stage_programs(plan));
  ASSERT_TRUE(stall.has_value());
  EXPECT_FALSE(hand_overs_complete_in_groups(plan, compile_plan(plan)));
  EXPECT_GE(stall->stage, 0);
  EXPECT_GE(stall->instruction, 0);
  EXPECT_NE(stall->message.find("stage 0 waits at"), std::string::npos) << stall->message;
  EXPECT_NE(stall->message.find("stage 1 waits at"), std::string::npos) << stall->message;
}

TEST(HandOverGroups, APlanWithoutAPipelineHasNothingToWalk) {
  const Plan plan = testing_support::data_parallel_plan("fashion-vgg", 2, 32);
  EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan)));
}

}  // namespace
}  // namespace splitbrain::plans
