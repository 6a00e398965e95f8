// A tied head under ZeRO 3 on its table's stage (plans/tied_weights.h): the rank keeps only its
// slice of the table, so each of the head's passes gathers the table whole first, as the
// embedding's do, and frees it after the pass; the head adds its weight gradient into the table's
// whole gradient, which the embedding's bucket reduce-scatters once; and the program's gathers
// send exactly what the compiled plan lists per pass (what the simulator counts).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "plans/tied_weights.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::plans {
namespace {

const std::string kGpt = "gpt:layers=1,hidden=32,heads=4,seq=8,vocab=48,positions=8";
constexpr int64_t kVocabulary = 48;
constexpr int64_t kWidth = 32;

// Every layer splits the samples over 'data'; with `table_split` the table's vocabulary rows (and
// the head's, its output features) are split over 'model' too.
Plan zero3_gpt(bool table_split, int micro_batches, bool recompute) {
  const Mesh mesh = table_split ? Mesh({{"data", 2}, {"model", 2}}) : Mesh({{"data", 2}});
  Plan plan = build_plan(kGpt, mesh, 8, [&](const model::Layer& layer) {
    LayerSharding sharding{{0}, {}, {}, {}};
    if (table_split && layer.name == "wte") sharding.in = {1};
    if (table_split && layer.name == "lm_head") sharding.out = {1};
    return sharding;
  });
  plan.zero_stage = 3;
  plan.micro_batches = micro_batches;
  plan.recompute_activations = recompute;
  return plan;
}

// The bytes a rank sends for the program's instructions that satisfy `which`.
template <class Which>
int64_t bytes_sent_by(const Plan& plan, const StepProgram& program, int rank, const Which& which) {
  int64_t bytes = 0;
  for (const StepInstruction& instruction : program.instructions) {
    if (!which(instruction)) continue;
    for (const Collective& c : collectives_of(instruction))
      bytes += bytes_sent(c, plan.mesh.index_in_group(rank, c.axes));
  }
  return bytes;
}

bool is_parameter_gather(const StepInstruction& i) {
  return i.op == StepOp::redistribute && i.steps.empty() && !i.collectives.empty();
}

struct Case {
  bool table_split = false;
  int micro_batches = 1;
  bool recompute = false;
};

class TiedHeadUnderZero3 : public ::testing::TestWithParam<Case> {};

TEST_P(TiedHeadUnderZero3, EachPassOfTheHeadGathersTheTableAndFreesItAfter) {
  const Case c = GetParam();
  const Plan plan = zero3_gpt(c.table_split, c.micro_batches, c.recompute);
  ASSERT_EQ(tied_weight_problem(plan), "");
  const CompiledPlan compiled = compile_plan(plan);
  const int head = plan.model->find("lm_head");
  const int table = plan.model->find("wte");
  const CompiledLayer& head_layer = compiled.layers[static_cast<size_t>(head)];
  const CompiledLayer& table_layer = compiled.layers[static_cast<size_t>(table)];
  ASSERT_EQ(shared_tied_table(plan, compiled, head), table);
  // The head gathers the table's slices over the table's synchronisation axes, like the table.
  ASSERT_EQ(table_layer.parameter_gathers.size(), 1u);
  ASSERT_EQ(head_layer.parameter_gathers.size(), 1u);
  EXPECT_EQ(head_layer.parameter_gathers[0].buffer_bytes, table_layer.parameter_gathers[0].buffer_bytes);
  EXPECT_EQ(head_layer.parameter_gathers[0].axes, std::vector<int>{plan.mesh.axis_index("data")});
  EXPECT_EQ(parameter_gather_owners(plan, compiled, head), std::vector<int>{table});
  EXPECT_EQ(own_parameter_gather(plan, compiled, head), nullptr);
  EXPECT_TRUE(gathers_parameters_per_pass(plan, head_layer));
  const int64_t block_bytes = kVocabulary / (c.table_split ? 2 : 1) * kWidth * 4;
  EXPECT_EQ(table_layer.parameter_gathers[0].buffer_bytes, block_bytes);

  for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const StepProgram program = compile_step(plan, compiled, rank);
    for (const std::string& problem : testing::step_program_problems(plan, compiled, program)) ADD_FAILURE() << problem;
    const auto& ins = program.instructions;
    int head_passes = 0;
    for (size_t p = 0; p < ins.size(); ++p) {
      const StepInstruction& pass = ins[p];
      const bool is_pass = pass.op == StepOp::forward || pass.op == StepOp::recompute || pass.op == StepOp::backward;
      if (!is_pass || pass.layer != head) continue;
      ++head_passes;
      // The pass computes with one whole block of the table, gathered for it.
      ASSERT_EQ(operands_of(program, pass).parameters.size(), 1u);
      const int whole = operands_of(program, pass).parameters[0];
      const StepBuffer& whole_buffer = program.buffers[static_cast<size_t>(whole)];
      EXPECT_EQ(whole_buffer.role, BufferRole::whole_parameter);
      EXPECT_EQ(whole_buffer.layer, table);
      EXPECT_EQ(whole_buffer.bytes, block_bytes);
      EXPECT_EQ(whole_buffer.micro_batch, pass.micro_batch);
      // Unpacked from the flat buffer of the gather of the head's pass (counted under the head;
      // posted ahead, so other instructions may come between them).
      const auto unpack = std::find_if(ins.begin(), ins.end(), [&](const StepInstruction& i) {
        return i.op == StepOp::unpack && std::find(i.writes.begin(), i.writes.end(), whole) != i.writes.end();
      });
      ASSERT_NE(unpack, ins.end());
      const auto gather = std::find_if(std::make_reverse_iterator(unpack), ins.rend(), [&](const StepInstruction& i) {
        return is_parameter_gather(i) && i.writes.at(0) == unpack->reads.at(0);
      });
      ASSERT_NE(gather, ins.rend());
      EXPECT_EQ(gather->layer, head);
      EXPECT_EQ(gather->micro_batch, pass.micro_batch);
      EXPECT_EQ(gather->collectives, head_layer.parameter_gathers);
      EXPECT_EQ(program.buffers[static_cast<size_t>(gather->writes.at(0))].role, BufferRole::gathered_parameters);
      EXPECT_EQ(program.buffers[static_cast<size_t>(gather->reads.at(0))].role, BufferRole::parameter_slice);
      // Freed right after the pass, before the next pass of any layer.
      const auto next_pass = std::find_if(ins.begin() + static_cast<std::ptrdiff_t>(p) + 1, ins.end(), [](auto& i) {
        return i.op == StepOp::forward || i.op == StepOp::recompute || i.op == StepOp::backward;
      });
      const auto freed = std::find_if(ins.begin() + static_cast<std::ptrdiff_t>(p) + 1, ins.end(),
                                      [&](auto& i) { return i.op == StepOp::free && i.buffer == whole; });
      EXPECT_LT(freed, next_pass);
      if (pass.op == StepOp::backward) {
        // The head's contribution goes into the table's whole gradient on the first replica only.
        const bool adds = adds_tied_gradient(plan, rank, head, table);
        const auto& grads = operands_of(program, pass).parameter_gradients;
        const bool writes_table_gradient = std::any_of(grads.begin(), grads.end(), [&](int g) {
          const StepBuffer& b = program.buffers[static_cast<size_t>(g)];
          return b.role == BufferRole::whole_parameter_gradient && b.layer == table;
        });
        EXPECT_EQ(writes_table_gradient, adds);
      }
    }
    EXPECT_EQ(head_passes, c.micro_batches * (c.recompute ? 3 : 2));

    // The gathers send what the compiled plan lists per pass (the simulator's count): each layer's
    // parameter_gathers before its forward and its backward, and its recompute again, per
    // micro-batch; the head's are the table's once more.
    int64_t listed = 0;
    for (int v = 0; v < plan.model->size(); ++v) {
      for (const Collective& g : compiled.layers[static_cast<size_t>(v)].parameter_gathers) {
        const int per_micro_batch = c.recompute && plan.model->layer(v).kind != model::OpKind::input ? 3 : 2;
        listed += c.micro_batches * per_micro_batch * bytes_sent(g, plan.mesh.index_in_group(rank, g.axes));
      }
    }
    EXPECT_EQ(bytes_sent_by(plan, program, rank, is_parameter_gather), listed);
    const int64_t head_gathers = bytes_sent_by(
        plan, program, rank, [&](const StepInstruction& i) { return is_parameter_gather(i) && i.layer == head; });
    EXPECT_EQ(head_gathers, c.micro_batches * (c.recompute ? 3 : 2) * block_bytes / 2);  // half the block each time

    // The table's gradient is reduce-scattered once, in the embedding's bucket.
    int table_buckets = 0;
    for (const GradientBucket& bucket : compiled.buckets) {
      table_buckets += static_cast<int>(std::count(bucket.layers.begin(), bucket.layers.end(), table));
      EXPECT_EQ(std::count(bucket.layers.begin(), bucket.layers.end(), head), 0);
    }
    EXPECT_EQ(table_buckets, 1);
    // The gathered table is a working buffer of the walk (the predicted memory).
    EXPECT_GE(walk_memory(program).of(MemoryCategory::buffers), block_bytes);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, TiedHeadUnderZero3,
                         ::testing::Values(Case{false, 1, false}, Case{false, 2, false}, Case{true, 2, false},
                                           Case{true, 1, true}),
                         [](const ::testing::TestParamInfo<Case>& test) {
                           return std::string(test.param.table_split ? "DataTimesModel" : "DataParallel") +
                                  std::to_string(test.param.micro_batches) + "MicroBatches" +
                                  (test.param.recompute ? "Recompute" : "");
                         });

// The head on another pipeline stage holds a copy of its own, gathered as its own parameters:
// it shares no table, and gathers nothing of the table's.
TEST(TiedHeadUnderZero3Pipeline, AHeadOnAnotherStageGathersItsOwnCopy) {
  Plan plan = build_plan(kGpt, Mesh({{"pipe", 2}, {"data", 2}}), 8, [](const model::Layer&) {
    return LayerSharding{{1}, {}, {}, {}};
  });
  plan.pipe_axis = 0;
  plan.micro_batches = 2;
  plan.zero_stage = 3;
  for (int i = plan.model->find("ln_f"); i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  const CompiledPlan compiled = compile_plan(plan);
  const int head = plan.model->find("lm_head");
  EXPECT_EQ(shared_tied_table(plan, compiled, head), -1);
  EXPECT_EQ(parameter_gather_owners(plan, compiled, head), std::vector<int>{head});
  EXPECT_NE(own_parameter_gather(plan, compiled, head), nullptr);
}

}  // namespace
}  // namespace splitbrain::plans
