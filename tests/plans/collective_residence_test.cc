// Which collectives a GPU's executor runs on device memory, and so where its host goes on without
// waiting: the sums, gathers, scatters and all-to-alls along any dimension do; halo exchanges and
// the pipeline's hand-overs do not. On compiled programs: a data-parallel step's bucket reduction
// and its wait, ZeRO 3's parameter gathers, and layout redistributions let the host go on; a
// pipeline's sends, receives and their waits do where they move as NCCL groups, else not.

#include "plans/collective_residence.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan_json.h"
#include "plans/step_compiler.h"
#include "tests/support/test_plans.h"

namespace splitbrain::plans {
namespace {

namespace fs = std::filesystem;
const fs::path kExamples = fs::path(__FILE__).parent_path().parent_path().parent_path() / "plans" / "examples";

Collective of_kind(CollectiveKind kind, int dim) {
  Collective c;
  c.kind = kind;
  c.dim = dim;
  return c;
}

TEST(CollectiveResidence, SumsGathersScattersAndAllToAllsRunOnDeviceMemory) {
  for (const int dim : {0, 1, 2}) {
    EXPECT_TRUE(runs_on_device_memory(of_kind(CollectiveKind::all_gather, dim)));
    EXPECT_TRUE(runs_on_device_memory(of_kind(CollectiveKind::reduce_scatter, dim)));
    EXPECT_TRUE(runs_on_device_memory(of_kind(CollectiveKind::all_to_all, dim)));
  }
  EXPECT_TRUE(runs_on_device_memory(of_kind(CollectiveKind::all_reduce, -1)));
  EXPECT_FALSE(runs_on_device_memory(of_kind(CollectiveKind::halo_exchange, 0)));
  EXPECT_FALSE(runs_on_device_memory(of_kind(CollectiveKind::send_recv, 0)));
  const std::vector<Collective> one = {of_kind(CollectiveKind::all_reduce, -1)};
  const std::vector<Collective> two = {of_kind(CollectiveKind::reduce_scatter, 1),
                                       of_kind(CollectiveKind::all_gather, 0)};
  const std::vector<Collective> with_halo = {of_kind(CollectiveKind::all_reduce, -1),
                                             of_kind(CollectiveKind::halo_exchange, 0)};
  EXPECT_TRUE(runs_on_device_memory(one));
  EXPECT_TRUE(runs_on_device_memory(two)) << "the device holds what passes between the links";
  EXPECT_FALSE(runs_on_device_memory(with_halo));
  EXPECT_FALSE(runs_on_device_memory(std::vector<Collective>{}));
}

// Per op of `program`: how many of its instructions let the host go on, and how many there are.
std::map<StepOp, std::pair<int, int>> going_on_by_op(const StepProgram& program, bool grouped_hand_overs = false) {
  std::map<StepOp, std::pair<int, int>> counts;
  for (const StepInstruction& instruction : program.instructions) {
    auto& [goes_on, all] = counts[instruction.op];
    goes_on += host_goes_on(program, instruction, grouped_hand_overs) ? 1 : 0;
    ++all;
  }
  return counts;
}

TEST(CollectiveResidence, ADataParallelStepsBucketReductionsAndZeroGathersLetTheHostGoOn) {
  for (const int zero_stage : {0, 3}) {
    Plan plan = testing_support::data_parallel_plan("fashion-vgg", 2, 32);
    plan.zero_stage = zero_stage;
    const StepProgram program = compile_step(plan, compile_plan(plan), 0);
    const auto counts = going_on_by_op(program);
    SCOPED_TRACE("zero stage " + std::to_string(zero_stage));
    ASSERT_TRUE(counts.count(StepOp::reduce));
    EXPECT_EQ(counts.at(StepOp::reduce).first, counts.at(StepOp::reduce).second);
    EXPECT_EQ(counts.at(StepOp::wait).first, counts.at(StepOp::wait).second);
    EXPECT_EQ(counts.at(StepOp::forward).first, 0);
    EXPECT_EQ(counts.at(StepOp::load_input).first, 0);
    if (zero_stage == 3) {
      ASSERT_TRUE(counts.count(StepOp::redistribute));  // each layer's parameter gather
      EXPECT_EQ(counts.at(StepOp::redistribute).first, counts.at(StepOp::redistribute).second);
    }
  }
}

TEST(CollectiveResidence, StagedHandOversKeepTheHostWaitingAndRedistributionsDoNot) {
  for (const char* example : {"vgg16-cifar10-pipeline-4.json", "fashion-vgg-splitbrain-2.json"}) {
    SCOPED_TRACE(example);
    const Plan plan = load_plan_file((kExamples / example).string());
    const CompiledPlan compiled = compile_plan(plan);
    const StepProgram program = compile_step(plan, compiled, 1);
    const auto counts = going_on_by_op(program);
    int checked = 0;
    for (const StepOp op : {StepOp::send, StepOp::recv}) {
      if (counts.count(op)) {
        EXPECT_EQ(counts.at(op).first, 0) << step_op_name(op);
        checked += counts.at(op).second;
      }
    }
    if (counts.count(StepOp::redistribute)) {
      EXPECT_EQ(counts.at(StepOp::redistribute).first, counts.at(StepOp::redistribute).second);
      checked += counts.at(StepOp::redistribute).second;
    }
    EXPECT_GT(checked, 0) << "no hand-over or redistribution to check";
    // A wait lets the host go on only where what it waits for does.
    for (const StepInstruction& instruction : program.instructions) {
      if (instruction.op != StepOp::wait) continue;
      const StepInstruction& awaited = program.instructions.at(static_cast<size_t>(instruction.waits_for));
      EXPECT_EQ(host_goes_on(program, instruction, false), host_goes_on(program, awaited, false));
      if (awaited.op == StepOp::send) {
        EXPECT_FALSE(host_goes_on(program, instruction, false));
      }
    }
  }
}

// Hand-overs moved as NCCL groups (a plan whose hand-overs complete that way) let the host go on,
// and so do the waits for the sends.
TEST(CollectiveResidence, GroupedHandOversLetTheHostGoOn) {
  const Plan plan = load_plan_file((kExamples / "vgg16-cifar10-pipeline-4.json").string());
  const StepProgram program = compile_step(plan, compile_plan(plan), 1);
  const auto counts = going_on_by_op(program, true);
  for (const StepOp op : {StepOp::send, StepOp::recv, StepOp::wait}) {
    ASSERT_TRUE(counts.count(op)) << step_op_name(op);
    EXPECT_EQ(counts.at(op).first, counts.at(op).second) << step_op_name(op);
  }
  EXPECT_EQ(counts.at(StepOp::forward).first, 0);
}

// A redistribution whose steps include a collective the device cannot run keeps the host waiting.
TEST(CollectiveResidence, ARedistributionWithAHostOnlyStepKeepsTheHostWaiting) {
  StepProgram program;
  StepInstruction redistribution;
  redistribution.op = StepOp::redistribute;
  RedistributionStep gather;
  gather.collective = of_kind(CollectiveKind::all_gather, 1);
  RedistributionStep local;
  redistribution.steps = {local, gather};
  EXPECT_TRUE(host_goes_on(program, redistribution, false));
  RedistributionStep halo;
  halo.collective = of_kind(CollectiveKind::halo_exchange, 0);
  redistribution.steps.push_back(halo);
  EXPECT_FALSE(host_goes_on(program, redistribution, false));
}

}  // namespace
}  // namespace splitbrain::plans
