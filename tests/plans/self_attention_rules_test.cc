// self_attention's sharding rules with grouped-query attention: a tensor-parallel split (`out`)
// takes whole key/value groups, so it must divide kv_heads (replicating k and v is not built),
// and the kernel problem carries the local key/value heads and the rotation. Context parallelism
// (`spatial`): the queries' positions split, the fused input gathered whole over them and its
// gradient reduce-scattered back.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/model_json.h"
#include "plans/kernel_problem.h"
#include "plans/op_rules.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"
#include "plans/redistribution.h"

namespace splitbrain::plans {
namespace {

using model::DType;

const Mesh kMesh({{"data", 2}, {"model", 4}});
constexpr int kData = 0;
constexpr int kModel = 1;
constexpr int64_t kHeadDim = 4;

// 8 query heads of width 4 over `kv_heads` key/value heads, on 6 positions.
model::Model attention_model(int64_t kv_heads, double rope_theta = 0.0, bool fused = false) {
  const int64_t width = (8 + 2 * kv_heads) * kHeadDim;
  nlohmann::json attention = {{"name", "attn"}, {"op", "self_attention"}, {"heads", 8}, {"kv_heads", kv_heads}};
  if (rope_theta > 0) attention["rope_theta"] = rope_theta;
  if (fused) attention["fused"] = true;
  const nlohmann::json doc = {{"format", "splitbrain-model"},
                              {"version", 1},
                              {"name", "gqa"},
                              {"layers",
                               {{{"name", "data"}, {"op", "input"}, {"shape", {6, 16}}},
                                {{"name", "qkv"}, {"op", "linear"}, {"out_features", width}},
                                attention}}};
  return model::model_from_json(doc, "gqa.json");
}

TEST(SelfAttentionRules, TensorParallelSplitTakesWholeKvGroups) {
  // 2 groups of 4 query heads: 2 ranks take a group each.
  const model::Model net = attention_model(2);
  const int attn = net.find("attn");
  const Mesh mesh({{"data", 2}, {"model", 2}});
  const LayerLayouts l = layer_layouts(net, attn, LayerSharding{{kData}, {kModel}, {}, {}}, mesh, 4, DType::fp32);
  // Input [4, 6, (8 + 2 x 2) x 4] split in two blocks of 24 columns: one group's q, k, v each.
  EXPECT_EQ(l.inputs[0], (TensorLayout{{{kData}, {}, {kModel}}, {}}));
  EXPECT_EQ(l.output, (TensorLayout{{{kData}, {}, {kModel}}, {}}));
  const auto problem = kernel_problem(net, attn, l, mesh, 4);
  ASSERT_TRUE(problem.has_value());
  // 2 samples, 4 local query heads sharing 1 local kv head, no rotation.
  EXPECT_EQ(std::get<AttentionProblem>(*problem), (AttentionProblem{2, 6, 4, kHeadDim, true, 1, false}));
}

TEST(SelfAttentionRules, RefusesSplitsThatDoNotDivideTheKvHeads) {
  // 2 kv heads over 4 ranks: 8 query heads would divide, but the groups do not.
  const model::Model net = attention_model(2);
  try {
    layer_layouts(net, net.find("attn"), LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 4, DType::fp32);
    FAIL() << "a split of 2 kv heads over 4 ranks accepted";
  } catch (const PlanError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("layer 'attn'"), std::string::npos) << what;
    EXPECT_NE(what.find("2 kv heads (key/value groups of 8 attention heads) not divisible by 4 ranks"),
              std::string::npos)
        << what;
  }
  // Multi-query attention splits no heads at all; 4 kv heads over 4 ranks do.
  EXPECT_THROW(layer_layouts(attention_model(1), 2, LayerSharding{{}, {kModel}, {}, {}}, kMesh, 4, DType::fp32),
               PlanError);
  EXPECT_NO_THROW(layer_layouts(attention_model(4), 2, LayerSharding{{}, {kModel}, {}, {}}, kMesh, 4, DType::fp32));
  // The batch splits as for multi-head attention.
  EXPECT_NO_THROW(layer_layouts(attention_model(1), 2, LayerSharding{{kData}, {}, {}, {}}, kMesh, 4, DType::fp32));
}

TEST(SelfAttentionRules, KernelProblemCarriesLocalKvHeadsAndRotation) {
  const model::Model net = attention_model(4, 10000.0);
  const int attn = net.find("attn");
  const LayerLayouts l = layer_layouts(net, attn, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 4, DType::fp32);
  const auto problem = kernel_problem(net, attn, l, kMesh, 4);
  ASSERT_TRUE(problem.has_value());
  // 8 heads in 4 groups over 4 ranks: 2 query heads and 1 kv head each.
  EXPECT_EQ(std::get<AttentionProblem>(*problem), (AttentionProblem{2, 6, 2, kHeadDim, true, 1, true}));

  // Multi-head attention, however spelt, keeps kv_heads 0: its problem is the one of before.
  const model::Model mha = attention_model(8);
  const LayerLayouts m = layer_layouts(mha, attn, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 4, DType::fp32);
  EXPECT_EQ(std::get<AttentionProblem>(*kernel_problem(mha, attn, m, kMesh, 4)),
            (AttentionProblem{2, 6, 2, kHeadDim, true}));

  // Fused attention says so: its backward computes the scores again, a kernel of its own.
  const model::Model fused = attention_model(4, 10000.0, true);
  const LayerLayouts f = layer_layouts(fused, attn, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 4, DType::fp32);
  AttentionProblem expected{2, 6, 2, kHeadDim, true, 1, true};
  expected.fused = true;
  EXPECT_EQ(std::get<AttentionProblem>(*kernel_problem(fused, attn, f, kMesh, 4)), expected);
}

TEST(SelfAttentionRules, ContextParallelSplitsTheQueriesAndGathersTheKeys) {
  // 8 heads over 2 kv heads on 6 positions; the batch over `data`, the positions over `model`
  // (a context axis of 2: 3 queries each).
  const model::Model net = attention_model(2, 10000.0);
  const int attn = net.find("attn");
  const Mesh mesh({{"data", 2}, {"model", 2}});
  const LayerSharding context{{kData}, {}, {}, {kModel}};
  const LayerLayouts l = layer_layouts(net, attn, context, mesh, 4, DType::fp32);
  EXPECT_EQ(l.inputs[0], (TensorLayout{{{kData}, {}, {}}, {}}));
  EXPECT_EQ(l.output, (TensorLayout{{{kData}, {kModel}, {}}, {}}));
  ASSERT_EQ(l.input_gradients.size(), 1u);
  EXPECT_EQ(l.input_gradients[0], (TensorLayout{{{kData}, {}, {}}, {kModel}}));
  EXPECT_DOUBLE_EQ(l.work_fraction, 0.25);
  AttentionProblem expected{2, 6, 8, kHeadDim, true, 2, true};
  expected.queries = 3;
  EXPECT_EQ(std::get<AttentionProblem>(*kernel_problem(net, attn, l, mesh, 4)), expected);

  // The fused q|k|v [4, 6, 48] of the sequence-split projection: gathered whole over the context
  // axis before attention (2 samples x 6 positions x 48 floats = 2,304 bytes gathered), its
  // gradient reduce-scattered back (each rank's whole-sequence share: 2,304 bytes in).
  const std::vector<int64_t> qkv = {4, 6, 48};
  const LayerLayouts projection = layer_layouts(net, net.find("qkv"), context, mesh, 4, DType::fp32);
  const std::vector<Collective> gather = redistribute(projection.output, l.inputs[0], mesh, qkv, 4);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].kind, CollectiveKind::all_gather);
  EXPECT_EQ(gather[0].axes, std::vector<int>{kModel});
  EXPECT_EQ(gather[0].dim, 1);
  EXPECT_EQ(gather[0].buffer_bytes, 2 * 6 * 48 * 4);
  const std::vector<Collective> scatter =
      redistribute(l.input_gradients[0], gradient_layout(projection.output), mesh, qkv, 4);
  ASSERT_EQ(scatter.size(), 1u);
  EXPECT_EQ(scatter[0].kind, CollectiveKind::reduce_scatter);
  EXPECT_EQ(scatter[0].axes, std::vector<int>{kModel});
  EXPECT_EQ(scatter[0].dim, 1);
  EXPECT_EQ(scatter[0].buffer_bytes, 2 * 6 * 48 * 4);
}

TEST(SelfAttentionRules, ContextParallelSplitMustDivideThePositions) {
  // 6 positions over 4 ranks.
  const model::Model net = attention_model(2);
  EXPECT_THROW(layer_layouts(net, net.find("attn"), LayerSharding{{}, {}, {}, {kModel}}, kMesh, 4, DType::fp32),
               PlanError);
}

}  // namespace
}  // namespace splitbrain::plans
