// Recomputation by blocks checkpoints each block on its own (plans/recompute_scope.h): its input
// is kept from the forward and the block runs forward again right before its own backward, so a
// chunk holds one block's activations at a time besides the checkpoints. Rerunning every block
// of a Llama then keeps, per layer, its two halves' inputs alone, where rerunning the chunk as
// one (recompute_blocks 0) has the whole forward's activations alive again before the backward.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::plans {
namespace {

constexpr int64_t kHidden = 32, kSeq = 16, kBatch = 2;

Plan llama(int layers, int recompute_blocks) {
  const std::string spec =
      fmt::format("llama:layers={},hidden={},heads=4,kv_heads=2,ffn=64,seq={},vocab=40", layers, kHidden, kSeq);
  Plan plan = build_plan(spec, Mesh({{"data", 1}}), kBatch, [](const model::Layer&) {
    return LayerSharding{{0}, {}, {}, {}};
  });
  plan.recompute_activations = true;
  plan.recompute_blocks = recompute_blocks;
  return plan;
}

int64_t activations_peak(const Plan& plan) {
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram program = compile_step(plan, compiled, 0);
  for (const std::string& problem : testing::step_program_problems(plan, compiled, program)) ADD_FAILURE() << problem;
  return walk_memory(program).of(MemoryCategory::activations);
}

TEST(BlockCheckpoint, EachMoreLayerKeepsItsTwoHalvesInputsAlone) {
  constexpr int kEveryBlock = 1000;  // more than the model has: all of them
  // A half's input: the residual stream of the micro-batch, [2, 16, 32] fp32.
  constexpr int64_t checkpoint = kBatch * kSeq * kHidden * 4;
  EXPECT_EQ(activations_peak(llama(8, kEveryBlock)) - activations_peak(llama(4, kEveryBlock)), 4 * 2 * checkpoint);
  // Rerun as one piece, each more layer's activations are all alive again.
  EXPECT_GT(activations_peak(llama(8, 0)) - activations_peak(llama(4, 0)), 4 * 4 * checkpoint);
  EXPECT_LT(activations_peak(llama(8, kEveryBlock)), activations_peak(llama(8, 0)));
}

// Each rerun block's forward again comes right before its own backward, last block first.
TEST(BlockCheckpoint, EachBlockIsRecomputedRightBeforeItsBackward) {
  const Plan plan = llama(2, 1000);
  const StepProgram program = compile_step(plan, compile_plan(plan), 0);
  const model::Model& net = *plan.model;
  std::string order;
  for (const StepInstruction& i : program.instructions) {
    if (i.op != StepOp::recompute && i.op != StepOp::backward) continue;
    const std::string& name = net.layer(i.layer).name;
    if (name == "h1.feed_forward.w2" || name == "h1.attention.wo" || name == "h0.feed_forward.w2") {
      order += fmt::format("{} {}; ", i.op == StepOp::recompute ? "recompute" : "backward", name);
    }
  }
  EXPECT_EQ(order,
            "recompute h1.feed_forward.w2; backward h1.feed_forward.w2; recompute h1.attention.wo; "
            "backward h1.attention.wo; recompute h0.feed_forward.w2; backward h0.feed_forward.w2; ");
}

}  // namespace
}  // namespace splitbrain::plans
