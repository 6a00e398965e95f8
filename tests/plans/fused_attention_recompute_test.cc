// Selective recompute and fused attention: a fused attention core keeps only its softmax
// statistics and makes its scores again in its own backward, so Plan::recompute_attention
// neither drops nor reruns it (the step program is the one without selective recompute), while
// the unfused core of the same Llama is dropped and rerun as before. Its kept buffers are the
// statistics: heads x T fp32 per sample, whatever the plan's dtype.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "model/op.h"
#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan_json.h"
#include "plans/step_compiler.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::plans {
namespace {

constexpr int kLayers = 3, kHeads = 4, kTokens = 32, kBatch = 8, kMicroBatches = 2;

Plan llama_plan(bool fused, bool selective, const std::string& dtype) {
  Plan plan = plan_from_text(fmt::format(R"({{
    "format": "splitbrain-plan", "version": 1,
    "model": "llama:layers={},hidden=64,heads={},kv_heads=2,ffn=128,seq={},vocab=96,rope_theta=10000,fused={}",
    "batch": {}, "dtype": "{}", "mesh": {{"data": 1}}, "default": {{}}, "micro_batches": {}
  }})",
                                         kLayers, kHeads, kTokens, fused ? 1 : 0, kBatch, dtype, kMicroBatches),
                             "fused-selective", ".");
  plan.recompute_attention = selective;
  return plan;
}

int recompute_count(const StepProgram& program) {
  int count = 0;
  for (const StepInstruction& i : program.instructions) count += i.op == StepOp::recompute ? 1 : 0;
  return count;
}

TEST(FusedAttentionRecompute, SelectiveRecomputeLeavesAFusedCoreAlone) {
  for (const bool fused : {false, true}) {
    const Plan kept_plan = llama_plan(fused, false, "fp32");
    const Plan selective_plan = llama_plan(fused, true, "fp32");
    const CompiledPlan compiled = compile_plan(kept_plan);
    const StepProgram kept = compile_step(kept_plan, compiled, 0);
    const StepProgram selective = compile_step(selective_plan, compiled, 0);
    for (const std::string& problem : testing::step_program_problems(selective_plan, compiled, selective)) {
      ADD_FAILURE() << problem;
    }
    for (const model::Layer& layer : selective_plan.model->layers()) {
      if (layer.kind == model::OpKind::self_attention) {
        EXPECT_EQ(selective_plan.recomputes_selectively(layer), !fused) << layer.name;
      }
    }
    EXPECT_EQ(recompute_count(kept), 0);
    EXPECT_EQ(recompute_count(selective), fused ? 0 : kLayers * kMicroBatches) << fused;
    if (fused) {
      EXPECT_EQ(selective.instructions.size(), kept.instructions.size());
      EXPECT_EQ(walk_memory(selective).total, walk_memory(kept).total);
    } else {
      EXPECT_LT(walk_memory(selective).total, walk_memory(kept).total);
    }
  }
}

TEST(FusedAttentionRecompute, KeptBuffersAreTheRowStatisticsInFp32) {
  const int64_t micro_batch = kBatch / kMicroBatches;
  for (const std::string dtype : {"fp32", "bf16"}) {
    for (const bool fused : {false, true}) {
      const Plan plan = llama_plan(fused, false, dtype);
      const StepProgram program = compile_step(plan, compile_plan(plan), 0);
      const int64_t element_bytes = dtype == "fp32" ? 4 : 2;
      const int64_t expected =
          fused ? micro_batch * kHeads * kTokens * 4 : micro_batch * kHeads * kTokens * kTokens * element_bytes;
      int attention_buffers = 0;
      for (const StepBuffer& buffer : program.buffers) {
        if (buffer.role != BufferRole::kept_by_op) continue;
        if (plan.model->layer(buffer.layer).kind != model::OpKind::self_attention) continue;
        ++attention_buffers;
        EXPECT_EQ(buffer.bytes, expected) << dtype << " fused " << fused;
      }
      EXPECT_EQ(attention_buffers, kLayers * kMicroBatches) << dtype << " fused " << fused;
    }
  }
}

}  // namespace
}  // namespace splitbrain::plans
