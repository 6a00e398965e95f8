// swiglu's sharding rules: the gate, the up projection and the output split alike by any role
// but a partial sum, with no parameters and no collective inside; and, like gelu, it stays in
// tensor parallelism's feature split when sequence parallelism splits the per-token layers.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

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

// A Llama-style MLP block on [8 positions, 16 features].
std::shared_ptr<const model::Model> llama_mlp() {
  return std::make_shared<const model::Model>(model::model_from_json(nlohmann::json::parse(R"({
      "format": "splitbrain-model", "version": 1, "name": "mlp", "layers": [
        {"name": "data", "op": "input", "shape": [8, 16]},
        {"name": "norm", "op": "rms_norm"},
        {"name": "w1", "op": "linear", "inputs": ["norm"], "out_features": 32, "bias": false},
        {"name": "w3", "op": "linear", "inputs": ["norm"], "out_features": 32, "bias": false},
        {"name": "gate", "op": "swiglu", "inputs": ["w1", "w3"]},
        {"name": "w2", "op": "linear", "out_features": 16, "bias": false},
        {"name": "res", "op": "add", "inputs": ["data", "w2"]}]})"),
                                                                     "mlp.json"));
}

TEST(SwigluRules, SplitsLikeAnElementwiseOpButNeverTakesPartialSums) {
  const OpRules& rules = op_rules(model::OpKind::swiglu);
  EXPECT_TRUE(rules.role_allowed(ShardRole::batch));
  EXPECT_TRUE(rules.role_allowed(ShardRole::out));
  EXPECT_TRUE(rules.role_allowed(ShardRole::spatial));
  EXPECT_FALSE(rules.role_allowed(ShardRole::in));
  // The simulator prices it by its model unit's elementwise pattern.
  EXPECT_EQ(rules.kernel_problem, nullptr);
}

TEST(SwigluRules, BothInputsAndTheOutputTakeOneLayout) {
  const auto net = llama_mlp();
  const int gate = net->find("gate");
  for (const LayerSharding& sharding :
       {LayerSharding{{kData}, {kModel}, {}, {}}, LayerSharding{{kData}, {}, {}, {kModel}},
        LayerSharding{{kData, kModel}, {}, {}, {}}}) {
    const LayerLayouts l = layer_layouts(*net, gate, sharding, kMesh, 8, DType::fp32);
    ASSERT_EQ(l.inputs.size(), 2u);
    EXPECT_EQ(l.inputs[0], l.output);
    EXPECT_EQ(l.inputs[1], l.output);
    EXPECT_TRUE(l.parameters.empty());
    EXPECT_TRUE(l.gradient_sync_axes.empty());
    EXPECT_TRUE(l.forward_internal.empty());
    EXPECT_TRUE(l.backward_internal.empty());
  }
  const LayerLayouts features =
      layer_layouts(*net, gate, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 8, DType::fp32);
  EXPECT_EQ(features.output, (TensorLayout{{{kData}, {}, {kModel}}, {}}));  // [N, T, F]: F over the model axis
  EXPECT_THROW(layer_layouts(*net, gate, LayerSharding{{kData}, {}, {kModel}, {}}, kMesh, 8, DType::fp32), PlanError);
}

TEST(SwigluRules, StaysOnTheFeatureSplitUnderSequenceParallelism) {
  // Megatron's MLP: gate and up column-parallel, down row-parallel over a tensor axis of 2.
  const auto net = llama_mlp();
  const Plan tensor = build_plan(net, "mlp.json", Mesh({{"data", 2}, {"model", 2}}), 4, [](const model::Layer& layer) {
    LayerSharding sharding{{0}, {}, {}, {}};
    if (layer.name == "w1" || layer.name == "w3" || layer.name == "gate") sharding.out = {1};
    if (layer.name == "w2") sharding.in = {1};
    return sharding;
  });
  const std::optional<Plan> sequence = with_sequence_parallelism(tensor);
  ASSERT_TRUE(sequence.has_value());
  EXPECT_FALSE(op_rules(model::OpKind::swiglu).per_token);
  const LayerSharding& gate = sequence->layers[static_cast<size_t>(net->find("gate"))];
  EXPECT_EQ(gate.out, std::vector<int>{1});
  EXPECT_TRUE(gate.spatial.empty());
  // The per-token layers around the MLP move to the sequence split.
  EXPECT_EQ(sequence->layers[static_cast<size_t>(net->find("norm"))].spatial, std::vector<int>{1});
  EXPECT_EQ(sequence->layers[static_cast<size_t>(net->find("res"))].spatial, std::vector<int>{1});
}

}  // namespace
}  // namespace splitbrain::plans
