// Pipeline hand-overs over a rendezvous transport (NCCL), walked on the compiled step programs:
// GPipe and 1F1B programs complete with every send grouped with the next receive, at any number
// of micro-batches, and interleaved 1F1B's with their receives posted a pass ahead (more shapes in
// step_program_test.cc); two stages that each receive first stall, and the stall names where each
// waits; n-th messages that are different tensors are found; a plan without a pipeline has nothing
// to walk. The executor's side (the same rules on MPI synchronous sends with one tag) runs in the
// scrambled equivalence suites.

#include "plans/hand_over_groups.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
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
      // With the training programs in hand (the simulator's call), asked twice: the second answer
      // is the remembered one.
      const std::vector<StepProgram> training = stage_programs(plan);
      EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan), training));
      EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan), training));
    }
  }
}

TEST(HandOverGroups, Interleaved1F1BCompletesWithItsReceivesPostedAhead) {
  const Plan example = load_plan_file((kExamples / "vgg16-cifar10-interleaved-4.json").string());
  for (const int micro_batches : {2, 4, 8}) {
    for (const bool recompute : {false, true}) {
      Plan plan = example;
      plan.micro_batches = micro_batches;
      plan.recompute_activations = recompute;
      SCOPED_TRACE(std::to_string(micro_batches) + " micro-batches" + (recompute ? ", recompute" : ""));
      const auto stall = stall_of_grouped_hand_overs(stage_programs(plan));
      EXPECT_FALSE(stall.has_value()) << (stall ? stall->message : "");
      EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan))) << "training and evaluation";
    }
  }
}

// A stage program of pipeline messages only: each (send, peer stage, consumer layer) in order,
// every one an activation of micro-batch 0 at input 0.
StepProgram messages_only(const std::vector<std::tuple<bool, int, int>>& messages) {
  StepProgram program;
  program.buffers.push_back({.bytes = 4, .role = BufferRole::output});
  for (const auto& [send, peer, layer] : messages) {
    Collective message;
    message.kind = CollectiveKind::send_recv;
    (send ? message.destination_index : message.source_index) = peer;
    program.instructions.push_back({.op = send ? StepOp::send : StepOp::recv,
                                    .stream = Stream::communication,
                                    .layer = layer,
                                    .micro_batch = 0,
                                    .index = 0,
                                    .reads = send ? SmallIndexList{0} : SmallIndexList{},
                                    .writes = send ? SmallIndexList{} : SmallIndexList{0},
                                    .collectives = {message}});
  }
  return program;
}

TEST(HandOverGroups, StagesThatEachReceiveFirstStallAndTheStallSaysWhere) {
  const std::vector<StepProgram> programs{messages_only({{false, 1, 5}, {true, 1, 7}}),
                                          messages_only({{false, 0, 7}, {true, 0, 5}})};
  const auto stall = stall_of_grouped_hand_overs(programs);
  ASSERT_TRUE(stall.has_value());
  EXPECT_EQ(stall->stage, 0);
  EXPECT_EQ(stall->instruction, 0);
  EXPECT_NE(stall->message.find("stage 0 waits at #0 receive activation of layer 5"), std::string::npos)
      << stall->message;
  EXPECT_NE(stall->message.find("stage 1 waits at #0 receive activation of layer 7"), std::string::npos)
      << stall->message;
  // Sent first, the same messages go through.
  EXPECT_FALSE(stall_of_grouped_hand_overs(std::vector<StepProgram>{messages_only({{true, 1, 7}, {false, 1, 5}}),
                                                                    messages_only({{false, 0, 7}, {true, 0, 5}})}));
}

TEST(HandOverGroups, NthMessagesOfDifferentTensorsAreFound) {
  const auto stall = stall_of_grouped_hand_overs(
      std::vector<StepProgram>{messages_only({{true, 1, 7}}), messages_only({{false, 0, 8}})});
  ASSERT_TRUE(stall.has_value());
  EXPECT_NE(stall->message.find("different tensors"), std::string::npos) << stall->message;
}

TEST(HandOverGroups, APlanWithoutAPipelineHasNothingToWalk) {
  const Plan plan = testing_support::data_parallel_plan("fashion-vgg", 2, 32);
  EXPECT_TRUE(hand_overs_complete_in_groups(plan, compile_plan(plan)));
}

}  // namespace
}  // namespace splitbrain::plans
