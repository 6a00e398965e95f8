// moe's sharding rules: the batch and the sequence split, every expert whole on every rank (its
// four parameter tensors whole, their gradients summed over both splits); a split of the experts
// or their features refused with the reason (expert parallelism is not built); and, per token,
// it joins the sequence split of sequence parallelism in a tensor-parallel block.

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

TEST(MoeRules, SplitsBatchAndSequenceOnly) {
  const OpRules& rules = op_rules(model::OpKind::moe);
  EXPECT_TRUE(rules.role_allowed(ShardRole::batch));
  EXPECT_TRUE(rules.role_allowed(ShardRole::spatial));
  EXPECT_FALSE(rules.role_allowed(ShardRole::out));
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

TEST(MoeRules, ExpertOrFeatureSplitsAreRefusedWithTheReason) {
  const auto net = sparse_block();
  const int moe = net->find("experts");
  for (const LayerSharding& sharding :
       {LayerSharding{{kData}, {kModel}, {}, {}}, LayerSharding{{kData}, {}, {kModel}, {}}}) {
    try {
      layer_layouts(*net, moe, sharding, kMesh, 8, DType::fp32);
      FAIL() << "a split of the experts accepted";
    } catch (const PlanError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("layer 'experts': role '"), std::string::npos) << message;
      EXPECT_NE(message.find("a moe layer cannot be split this way: expert parallelism is not built yet"),
                std::string::npos)
          << message;
    }
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
