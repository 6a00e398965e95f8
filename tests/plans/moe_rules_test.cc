// moe's sharding rules: the batch and the sequence split, every expert whole on every rank (its
// four parameter tensors whole, their gradients summed over both splits); expert parallelism (the
// experts over `out`: the input whole over the group, the output a partial sum, the routing
// weights' gradients all-reduced inside the layer); a split of an expert's features refused with
// the reason; and, per token, it joins the sequence split of sequence parallelism in a
// tensor-parallel block.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_json.h"
#include "plans/op_rules.h"
#include "plans/op_sharding.h"
#include "plans/plan_builder.h"
#include "plans/plan_error.h"
#include "plans/sequence_parallel.h"

namespace splitbrain::plans {
namespace {

using model::DType;

const Mesh kMesh({{"data", 2}, {"model", 4}});
constexpr int kData = 0;
constexpr int kModel = 1;

// A Mixtral-style MLP half on [8 positions, 16 features]: 4 experts of 24, top 2, after a
// tensor-parallel projection so a plan has tensor parallelism to add sequence parallelism to.
std::shared_ptr<const model::Model> sparse_block() {
  return std::make_shared<const model::Model>(model::model_from_json(nlohmann::json::parse(R"({
      "format": "splitbrain-model", "version": 1, "name": "moe", "layers": [
        {"name": "data", "op": "input", "shape": [8, 16]},
        {"name": "up", "op": "linear", "out_features": 32, "bias": false},
        {"name": "down", "op": "linear", "out_features": 16, "bias": false},
        {"name": "norm", "op": "rms_norm"},
        {"name": "experts", "op": "moe", "experts": 4, "top_k": 2, "ffn": 24},
        {"name": "res", "op": "add", "inputs": ["down", "experts"]}]})"),
                                                                     "moe.json"));
}

TEST(MoeRules, SplitsBatchSequenceAndExperts) {
  const OpRules& rules = op_rules(model::OpKind::moe);
  EXPECT_TRUE(rules.role_allowed(ShardRole::batch));
  EXPECT_TRUE(rules.role_allowed(ShardRole::spatial));
  EXPECT_TRUE(rules.role_allowed(ShardRole::out));
  EXPECT_FALSE(rules.role_allowed(ShardRole::in));
  EXPECT_TRUE(rules.per_token);
  // The simulator prices it by its model unit's FLOPs as matrix products.
  EXPECT_EQ(rules.kernel_problem, nullptr);
}

TEST(MoeRules, BatchSplitKeepsEveryExpertWholeOnEveryRank) {
  const auto net = sparse_block();
  const int moe = net->find("experts");
  for (const LayerSharding& sharding :
       {LayerSharding{{kData, kModel}, {}, {}, {}}, LayerSharding{{kData}, {}, {}, {kModel}}}) {
    const LayerLayouts l = layer_layouts(*net, moe, sharding, kMesh, 8, DType::fp32);
    ASSERT_EQ(l.inputs.size(), 1u);
    EXPECT_EQ(l.inputs[0], l.output);
    // The router (experts x D), then the stacked w1 and w3 (experts x ffn x D) and w2 (experts x D x ffn).
    ASSERT_EQ(l.parameters.size(), 4u);
    EXPECT_EQ(l.parameters[0].global_shape, (std::vector<int64_t>{4, 16}));
    EXPECT_EQ(l.parameters[1].global_shape, (std::vector<int64_t>{4, 24, 16}));
    EXPECT_EQ(l.parameters[2].global_shape, (std::vector<int64_t>{4, 24, 16}));
    EXPECT_EQ(l.parameters[3].global_shape, (std::vector<int64_t>{4, 16, 24}));
    int64_t local = 0;
    for (const ParameterShard& shard : l.parameters) local += shard.local_elements;
    EXPECT_EQ(local, net->layer(moe).cost.params);  // whole: data parallelism
    for (int axis : {kData, kModel}) {
      EXPECT_NE(std::find(l.gradient_sync_axes.begin(), l.gradient_sync_axes.end(), axis), l.gradient_sync_axes.end())
          << "axis " << axis;
    }
    EXPECT_TRUE(l.forward_internal.empty());  // tokens are routed where they are: no collective
    EXPECT_TRUE(l.backward_internal.empty());
  }
  const LayerLayouts sequence =
      layer_layouts(*net, moe, LayerSharding{{kData}, {}, {}, {kModel}}, kMesh, 8, DType::fp32);
  EXPECT_EQ(sequence.output, (TensorLayout{{{kData}, {kModel}, {}}, {}}));  // [N, T, D]: T over the model axis
}

TEST(MoeRules, ExpertParallelismSplitsTheExpertsOverOut) {
  const auto net = sparse_block();
  const int moe = net->find("experts");
  const LayerLayouts l = layer_layouts(*net, moe, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 8, DType::fp32);
  // Every rank of the model group holds the same tokens and gives its experts' share of the output.
  ASSERT_EQ(l.inputs.size(), 1u);
  EXPECT_EQ(l.inputs[0], (TensorLayout{{{kData}, {}, {}}, {}}));
  EXPECT_EQ(l.output, (TensorLayout{{{kData}, {}, {}}, {kModel}}));
  EXPECT_EQ(l.input_gradients[0], (TensorLayout{{{kData}, {}, {}}, {kModel}}));
  // The router whole, one expert of each stacked tensor a rank (4 experts over 4 ranks).
  ASSERT_EQ(l.parameters.size(), 4u);
  EXPECT_EQ(l.parameters[0].local_elements, 4 * 16);
  EXPECT_EQ(l.parameters[1].local_elements, 24 * 16);
  EXPECT_EQ(l.parameters[2].local_elements, 24 * 16);
  EXPECT_EQ(l.parameters[3].local_elements, 16 * 24);
  // Gradients summed over the batch only: the router's is whole on each rank of the model group.
  EXPECT_EQ(l.gradient_sync_axes, std::vector<int>{kData});
  EXPECT_TRUE(l.forward_internal.empty());
  // Backward: the routing weights' gradients of the rank's 4 samples x 8 positions over the 4
  // experts, fp32: 32 x 4 x 4 = 512 bytes all-reduced over the model group.
  ASSERT_EQ(l.backward_internal.size(), 1u);
  const Collective& c = l.backward_internal[0];
  EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
  EXPECT_EQ(c.axes, std::vector<int>{kModel});
  EXPECT_EQ(c.group_size, 4);
  EXPECT_EQ(c.buffer_bytes, 512);
}

TEST(MoeRules, ExpertsNotDividingTheGroupOrFeatureSplitsAreRefused) {
  const auto net = sparse_block();
  const int moe = net->find("experts");
  const Mesh eight({{"data", 1}, {"model", 8}});
  EXPECT_THROW(layer_layouts(*net, moe, LayerSharding{{}, {kModel}, {}, {}}, eight, 8, DType::fp32), PlanError);
  try {
    layer_layouts(*net, moe, LayerSharding{{kData}, {}, {kModel}, {}}, kMesh, 8, DType::fp32);
    FAIL() << "a split of the experts' features accepted";
  } catch (const PlanError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("layer 'experts': role '"), std::string::npos) << message;
    EXPECT_NE(message.find("expert tensor parallelism) is not built yet"), std::string::npos) << message;
  }
}

TEST(MoeRules, JoinsTheSequenceSplitUnderSequenceParallelism) {
  // Megatron's MLP around it: up column-parallel, down row-parallel over a tensor axis of 2; the
  // sparse layer replicated on that axis until sequence parallelism splits its positions.
  const auto net = sparse_block();
  const Plan tensor = build_plan(net, "moe.json", Mesh({{"data", 2}, {"model", 2}}), 4, [](const model::Layer& layer) {
    LayerSharding sharding{{0}, {}, {}, {}};
    if (layer.name == "up") sharding.out = {1};
    if (layer.name == "down") sharding.in = {1};
    return sharding;
  });
  EXPECT_TRUE(tensor.layers[static_cast<size_t>(net->find("experts"))].spatial.empty());
  const std::optional<Plan> sequence = with_sequence_parallelism(tensor);
  ASSERT_TRUE(sequence.has_value());
  const LayerSharding& moe = sequence->layers[static_cast<size_t>(net->find("experts"))];
  EXPECT_EQ(moe.spatial, std::vector<int>{1});
  EXPECT_TRUE(moe.out.empty());
}

}  // namespace
}  // namespace splitbrain::plans
