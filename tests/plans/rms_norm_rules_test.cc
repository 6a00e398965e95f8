// rms_norm's sharding rules: the batch and the sequence split freely, the normalised features
// never, and its weight is whole on every rank with its gradient summed over both splits.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/model_json.h"
#include "plans/kernel_problem.h"
#include "plans/op_rules.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

using model::DType;

const Mesh kMesh({{"data", 2}, {"model", 4}});
constexpr int kData = 0;
constexpr int kModel = 1;

model::Model tiny_model() {
  return model::model_from_json(nlohmann::json::parse(R"({"format": "splitbrain-model", "version": 1,
      "name": "rms", "layers": [
        {"name": "data", "op": "input", "shape": [8, 16]},
        {"name": "fc", "op": "linear", "out_features": 16},
        {"name": "norm", "op": "rms_norm", "eps": 1e-6}]})"),
                                "rms.json");
}

TEST(RmsNormRules, SplitsBatchAndSequenceButNotFeatures) {
  const OpRules& rules = op_rules(model::OpKind::rms_norm);
  EXPECT_TRUE(rules.role_allowed(ShardRole::batch));
  EXPECT_TRUE(rules.role_allowed(ShardRole::spatial));
  EXPECT_FALSE(rules.role_allowed(ShardRole::out));
  EXPECT_FALSE(rules.role_allowed(ShardRole::in));
}

TEST(RmsNormRules, WeightIsWholeAndItsGradientSummedOverBothSplits) {
  const model::Model net = tiny_model();
  const int norm = net.find("norm");
  const LayerLayouts l = layer_layouts(net, norm, LayerSharding{{kData}, {}, {}, {kModel}}, kMesh, 64, DType::fp32);
  EXPECT_EQ(l.output, (TensorLayout{{{kData}, {kModel}, {}}, {}}));
  EXPECT_EQ(l.inputs[0], l.output);
  ASSERT_EQ(l.parameters.size(), 1u);  // the weight: no shift
  EXPECT_EQ(l.parameters[0].local_elements, 16);
  for (int axis : {kData, kModel}) {
    EXPECT_NE(std::find(l.gradient_sync_axes.begin(), l.gradient_sync_axes.end(), axis), l.gradient_sync_axes.end())
        << "axis " << axis;
  }
  EXPECT_TRUE(l.forward_internal.empty());  // rows are independent: no collective inside
  EXPECT_TRUE(l.backward_internal.empty());
  EXPECT_THROW(layer_layouts(net, norm, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 64, DType::fp32), PlanError);
}

TEST(RmsNormRules, HasNoKernelProblemOfItsOwn) {
  // The simulator prices it by its model unit's elementwise pattern.
  EXPECT_EQ(op_rules(model::OpKind::rms_norm).kernel_problem, nullptr);
}

}  // namespace
}  // namespace splitbrain::plans
