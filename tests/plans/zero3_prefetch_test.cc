// ZeRO 3 as FSDP2 runs it (plans/step_compiler_gathers.cc, plans/step_gradient_sync.h): each
// parameter gather is posted a block ahead and waited for right before its pass unpacks it, so
// the gathers of the next block are in flight (and their flat buffers alive) while this block
// computes; and each gradient reduce-scatter is waited for, its input let go, when the next
// bucket starts, so one bucket's input is alive at a time.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::plans {
namespace {

const std::string kLlama = "llama:layers=3,hidden=32,heads=4,kv_heads=2,ffn=64,seq=8,vocab=40";

Plan zero3_llama(int micro_batches, int recompute_blocks) {
  Plan plan = build_plan(kLlama, Mesh({{"data", 2}}), 8, [](const model::Layer&) {
    return LayerSharding{{0}, {}, {}, {}};
  });
  plan.zero_stage = 3;
  plan.micro_batches = micro_batches;
  plan.recompute_activations = recompute_blocks > 0;
  plan.recompute_blocks = recompute_blocks;
  plan.gradient_bucket_bytes = 1;  // a bucket per layer: several reduce-scatters to order
  return plan;
}

bool is_parameter_gather(const StepInstruction& i) {
  return i.op == StepOp::redistribute && i.steps.empty() && !i.collectives.empty();
}

bool is_pass(const StepInstruction& i) {
  return i.op == StepOp::forward || i.op == StepOp::recompute || i.op == StepOp::backward;
}

struct Case {
  int micro_batches = 1;
  int recompute_blocks = 0;
};

class Zero3Prefetch : public ::testing::TestWithParam<Case> {};

TEST_P(Zero3Prefetch, EachGatherIsPostedABlockAheadAndWaitedForRightBeforeItsUnpack) {
  const Plan plan = zero3_llama(GetParam().micro_batches, GetParam().recompute_blocks);
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram program = compile_step(plan, compiled, 0);
  for (const std::string& problem : testing::step_program_problems(plan, compiled, program)) ADD_FAILURE() << problem;
  const auto& ins = program.instructions;
  int gathers = 0;
  int overlapped = 0;
  for (size_t g = 0; g < ins.size(); ++g) {
    if (!is_parameter_gather(ins[g])) continue;
    ++gathers;
    const int flat = ins[g].writes.at(0);
    // One wait for it, then the unpack of its flat buffer, which the pass of its layer follows.
    std::vector<size_t> waits;
    for (size_t i = g + 1; i < ins.size(); ++i) {
      if (ins[i].op == StepOp::wait && ins[i].waits_for == static_cast<int>(g)) waits.push_back(i);
    }
    ASSERT_EQ(waits.size(), 1u) << "gather #" << g;
    const auto unpack = std::find_if(ins.begin() + static_cast<std::ptrdiff_t>(g), ins.end(), [&](auto& i) {
      return i.op == StepOp::unpack && !i.reads.empty() && i.reads[0] == flat;
    });
    ASSERT_NE(unpack, ins.end());
    EXPECT_LT(waits[0], static_cast<size_t>(unpack - ins.begin()));
    for (size_t i = waits[0] + 1; i < static_cast<size_t>(unpack - ins.begin()); ++i) {
      EXPECT_FALSE(is_pass(ins[i])) << "a pass between gather #" << g << "'s wait and its unpack";
    }
    const auto pass = std::find_if(unpack, ins.end(), [](auto& i) { return is_pass(i); });
    ASSERT_NE(pass, ins.end());
    EXPECT_EQ(pass->layer, ins[g].layer);
    EXPECT_EQ(pass->micro_batch, ins[g].micro_batch);
    // Posted ahead: another pass computes while it is in flight (all but the step's first block).
    const bool passes_between =
        std::any_of(ins.begin() + static_cast<std::ptrdiff_t>(g), ins.begin() + static_cast<std::ptrdiff_t>(waits[0]),
                    [](auto& i) { return is_pass(i); });
    overlapped += passes_between ? 1 : 0;
  }
  ASSERT_GT(gathers, 10);
  // Only the step's first block (the embedding alone) gathers with nothing to compute beside it.
  EXPECT_EQ(overlapped, gathers - 1);
}

// The flat buffers alive while a pass computes are those of gathers posted and not yet unpacked:
// the rest of its own block's and the next block's, never further ahead.
TEST_P(Zero3Prefetch, AtMostTheNextBlocksGathersAreInFlight) {
  const Plan plan = zero3_llama(GetParam().micro_batches, GetParam().recompute_blocks);
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram program = compile_step(plan, compiled, 0);
  std::map<int, size_t> in_flight;  // flat buffer -> its gather
  size_t most_in_flight = 0;
  for (const StepInstruction& i : program.instructions) {
    if (is_parameter_gather(i)) in_flight[i.writes.at(0)] = 0;
    if (i.op == StepOp::unpack && !i.reads.empty()) in_flight.erase(i.reads[0]);
    if (is_pass(i)) most_in_flight = std::max(most_in_flight, in_flight.size());
  }
  // An MLP half gathers its norm and three projections, an attention half its norm and two:
  // at most the rest of one half and the whole next one.
  EXPECT_GE(most_in_flight, 3u);
  EXPECT_LE(most_in_flight, 4u + 3u);
}

// FSDP2 lets go of a reduce-scatter's input once it is done, before the next one's is made.
TEST_P(Zero3Prefetch, OneBucketInputIsAliveAtATime) {
  const Plan plan = zero3_llama(GetParam().micro_batches, GetParam().recompute_blocks);
  const CompiledPlan compiled = compile_plan(plan);
  ASSERT_GT(compiled.buckets.size(), 5u);
  const StepProgram program = compile_step(plan, compiled, 0);
  int alive = 0;
  int most_alive = 0;
  int reduces = 0;
  for (const StepInstruction& i : program.instructions) {
    reduces += i.op == StepOp::reduce ? 1 : 0;
    if (i.op != StepOp::alloc && i.op != StepOp::free) continue;
    if (program.buffers[static_cast<size_t>(i.buffer)].role != BufferRole::bucket) continue;
    alive += i.op == StepOp::alloc ? 1 : -1;
    most_alive = std::max(most_alive, alive);
  }
  EXPECT_EQ(reduces, static_cast<int>(compiled.buckets.size()));
  EXPECT_EQ(most_alive, 1);
}

INSTANTIATE_TEST_SUITE_P(Variants, Zero3Prefetch, ::testing::Values(Case{1, 0}, Case{2, 0}, Case{1, 100}, Case{2, 100}),
                         [](const ::testing::TestParamInfo<Case>& test) {
                           return std::to_string(test.param.micro_batches) + "MicroBatches" +
                                  (test.param.recompute_blocks > 0 ? "Recompute" : "");
                         });

}  // namespace
}  // namespace splitbrain::plans
