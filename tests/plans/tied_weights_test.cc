// plans/tied_weights.h: which ties of GPT's lm_head to wte's table a step can share, the repair
// the planner applies (the table follows its head), and the tie across pipeline stages.

#include "plans/tied_weights.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

const std::string kGpt = "gpt:layers=1,hidden=32,heads=4,seq=8,vocab=48,positions=8";

// The four parts a mesh axis can play for one layer of a tie.
enum class Part { none, batch, out, in };
constexpr Part kParts[] = {Part::none, Part::batch, Part::out, Part::in};

LayerSharding sharding_of(Part axis0, Part axis1) {
  LayerSharding s;
  const Part parts[] = {axis0, axis1};
  for (int axis = 0; axis < 2; ++axis) {
    if (parts[axis] == Part::batch) s.batch.push_back(axis);
    if (parts[axis] == Part::out) s.out.push_back(axis);
    if (parts[axis] == Part::in) s.in.push_back(axis);
  }
  return s;
}

// Every other layer splits the samples over the first axis; wte and lm_head as given.
Plan gpt_plan(const LayerSharding& table, const LayerSharding& head) {
  return build_plan(kGpt, Mesh({{"data", 2}, {"model", 2}}), 4, [&](const model::Layer& layer) {
    if (layer.name == "wte") return table;
    if (layer.name == "lm_head") return head;
    return LayerSharding{{0}, {}, {}, {}};
  });
}

bool compiles(const Plan& plan) {
  try {
    compile_plan(plan);
    return true;
  } catch (const PlanError&) {
    return false;
  }
}

// Over every way two axes can split the table and the head: compile_plan refuses exactly the
// plans with a problem, the problem names both layers, and the table following its head always
// gives a plan that compiles.
TEST(TiedWeights, TheTableFollowingItsHeadAlwaysGivesAPlanThatCompiles) {
  int with_problem = 0;
  int without = 0;
  for (Part e0 : kParts) {
    for (Part e1 : kParts) {
      for (Part h0 : kParts) {
        for (Part h1 : kParts) {
          const Plan plan = gpt_plan(sharding_of(e0, e1), sharding_of(h0, h1));
          const std::string problem = tied_weight_problem(plan);
          EXPECT_EQ(compiles(plan), problem.empty()) << problem;
          if (problem.empty()) {
            ++without;
            continue;
          }
          ++with_problem;
          EXPECT_NE(problem.find("'lm_head'"), std::string::npos) << problem;
          EXPECT_NE(problem.find("'wte'"), std::string::npos) << problem;
          const std::optional<Plan> following = with_tables_following_heads(plan);
          ASSERT_TRUE(following.has_value()) << problem;
          EXPECT_EQ(tied_weight_problem(*following), "");
          EXPECT_TRUE(compiles(*following));
          EXPECT_EQ(following->layers[static_cast<size_t>(plan.model->find("lm_head"))],
                    plan.layers[static_cast<size_t>(plan.model->find("lm_head"))]);
        }
      }
    }
  }
  EXPECT_GT(with_problem, 40);  // 209 of the 256
  EXPECT_GT(without, 40);       // 47
}

TEST(TiedWeights, AHeadReplicatedOverAnAxisItsTableIgnoresIsFine) {
  // The table replicated, the head's samples split over both axes: SplitBrain's classifier.
  EXPECT_EQ(tied_weight_problem(gpt_plan(sharding_of(Part::batch, Part::batch), sharding_of(Part::batch, Part::out))),
            "");
  // The table's columns split over 'model' while the head splits its vocabulary there.
  const std::string problem =
      tied_weight_problem(gpt_plan(sharding_of(Part::batch, Part::out), sharding_of(Part::batch, Part::out)));
  EXPECT_NE(problem.find("mesh axis 'model' splits the vocabulary rows"), std::string::npos) << problem;
  EXPECT_EQ(
      with_tables_following_heads(gpt_plan(sharding_of(Part::batch, Part::in), sharding_of(Part::batch, Part::out))),
      std::nullopt);
}

// Across pipeline stages the head holds a copy of the table, split like it, and the two stages
// swap their gradients of it: the bytes of a block each way.
TEST(TiedWeights, AHeadOnAnotherStageHoldsACopyAndSwapsItsGradient) {
  Plan plan = build_plan(kGpt, Mesh({{"pipe", 2}, {"model", 2}}), 4, [](const model::Layer& layer) {
    if (layer.name == "wte") return LayerSharding{{}, {}, {1}, {}};      // the vocabulary rows over 'model'
    if (layer.name == "lm_head") return LayerSharding{{}, {1}, {}, {}};  // its vocabulary (out) over 'model'
    return LayerSharding{};
  });
  plan.pipe_axis = 0;
  plan.micro_batches = 2;
  const int head = plan.model->find("lm_head");
  const int table = plan.model->find("wte");
  for (int i = plan.model->find("ln_f"); i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  EXPECT_EQ(tied_weight_problem(plan), "");
  const CompiledPlan compiled = compile_plan(plan);
  const CompiledLayer& last = compiled.layers[static_cast<size_t>(head)];
  ASSERT_TRUE(last.tied_copy.has_value());
  EXPECT_EQ(last.tied_copy->table, table);
  EXPECT_EQ(last.tied_copy->table_stage, 0);
  ASSERT_EQ(last.layouts.parameters.size(), 1u);
  EXPECT_EQ(last.layouts.parameters[0].layout,
            compiled.layers[static_cast<size_t>(table)].layouts.parameters[0].layout);
  const int64_t block_bytes = 48 / 2 * 32 * 4;
  EXPECT_EQ(last.tied_copy->to_head.buffer_bytes, block_bytes);
  EXPECT_EQ(last.tied_copy->to_head.source_index, 0);
  EXPECT_EQ(last.tied_copy->to_head.destination_index, 1);
  EXPECT_EQ(last.tied_copy->to_table.buffer_bytes, block_bytes);
  EXPECT_EQ(last.tied_copy->to_table.source_index, 1);

  // Split unlike the table, the copy could not be summed block by block; reduced over other
  // axes, some contributions would be summed twice. The table following the head repairs both.
  // Any ZeRO stage is fine: the stages swap before their buckets are sliced.
  Plan columns = plan;
  columns.layers[static_cast<size_t>(table)] = LayerSharding{{}, {1}, {}, {}};
  EXPECT_NE(tied_weight_problem(columns).find("is split"), std::string::npos) << tied_weight_problem(columns);
  EXPECT_EQ(tied_weight_problem(*with_tables_following_heads(columns)), "");
  Plan samples = plan;  // the table's samples split over 'model', the head replicated there
  samples.layers[static_cast<size_t>(table)] = LayerSharding{{1}, {}, {}, {}};
  samples.layers[static_cast<size_t>(head)] = LayerSharding{};
  EXPECT_NE(tied_weight_problem(samples).find("reduced over other mesh axes"), std::string::npos)
      << tied_weight_problem(samples);
  EXPECT_EQ(tied_weight_problem(*with_tables_following_heads(samples)), "");
  for (int zero : {1, 2, 3}) {
    Plan sharded = plan;
    sharded.zero_stage = zero;
    EXPECT_EQ(tied_weight_problem(sharded), "") << "ZeRO " << zero;
  }

  // On one stage the head owns no weight.
  for (int& stage : plan.stage_of_layer) stage = 0;
  EXPECT_FALSE(compile_plan(plan).layers[static_cast<size_t>(head)].tied_copy.has_value());
}

}  // namespace
}  // namespace splitbrain::plans
