// ZeRO 3's parameter gathers, posted a block ahead by the step program, run on the stage's
// communication stream while the blocks before compute (sim/program_timeline.h): with every
// pass 1 ms and every gather 0.4 ms, each block's gathers take less than the block before it
// computes, so only the step's first gather (the embedding's, with nothing to compute beside it)
// is exposed. Gathered in turn before each pass, all of them would be.

#include <gtest/gtest.h>

#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/program_timeline.h"

namespace splitbrain::sim {
namespace {

TEST(Zero3OverlapTimeline, OnlyTheFirstGatherIsExposed) {
  plans::Plan plan = plans::build_plan("llama:layers=3,hidden=32,heads=4,kv_heads=2,ffn=64,seq=8,vocab=40",
                                       plans::Mesh({{"data", 2}}), 8, [](const model::Layer&) {
                                         return plans::LayerSharding{{0}, {}, {}, {}};
                                       });
  plan.zero_stage = 3;
  constexpr double kPassSeconds = 1e-3;
  constexpr double kGatherSeconds = 0.4e-3;
  const std::vector<plans::StepProgram> programs{plans::compile_step(plan, plans::compile_plan(plan), 0)};
  int gathers = 0;
  const InstructionPricer price = [&](int, const plans::StepInstruction& i) {
    InstructionCost cost;
    if (i.op == plans::StepOp::forward || i.op == plans::StepOp::recompute || i.op == plans::StepOp::backward) {
      cost.compute_seconds = kPassSeconds;
    }
    if (i.op == plans::StepOp::redistribute && i.steps.empty() && !i.collectives.empty()) {
      cost.communication_seconds = kGatherSeconds;
    }
    return cost;
  };
  for (const plans::StepInstruction& i : programs[0].instructions) {
    gathers += i.op == plans::StepOp::redistribute && i.steps.empty() && !i.collectives.empty() ? 1 : 0;
  }
  ASSERT_GT(gathers, 10);
  const ProgramTimeline timeline = run_program_timeline(programs, price, /*communication_overlap=*/1.0);
  EXPECT_NEAR(timeline.stages.at(0).phases.comm_exposed, kGatherSeconds, 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
