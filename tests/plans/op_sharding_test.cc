// Op sharding rules: the layouts each role gives an op's tensors (SoyBean's aligned tilings on a
// mesh), and the errors for shardings an op cannot take.

#include <gtest/gtest.h>

#include "model/graph_builder.h"
#include "model/zoo.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

using model::DType;

const Mesh kMesh({{"data", 2}, {"model", 4}});
constexpr int kData = 0;
constexpr int kModel = 1;

TensorLayout layout(std::vector<std::vector<int>> dims, std::vector<int> partial = {}) {
  return TensorLayout{std::move(dims), std::move(partial)};
}

class OpShardingOnVggCifar : public testing::Test {
 protected:
  model::Model net = model::build_zoo_model("vgg11-cifar10");
  int fc1 = net.find("fc1");
};

TEST_F(OpShardingOnVggCifar, LinearSplitByOutputFeatures) {
  // Megatron's column split / Gholami's Pr: x replicated over model, W rows split, y split.
  const LayerLayouts l = layer_layouts(net, fc1, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 64, DType::fp32);
  EXPECT_EQ(l.inputs[0], layout({{kData}, {}}));
  EXPECT_EQ(l.output, layout({{kData}, {kModel}}));
  // dX = W^T dY over the local rows only: a partial sum over the model axis.
  EXPECT_EQ(l.input_gradients[0], layout({{kData}, {}}, {kModel}));
  ASSERT_EQ(l.parameters.size(), 2u);
  EXPECT_EQ(l.parameters[0].local_elements, 4096 / 4 * 512);  // weight rows
  EXPECT_EQ(l.parameters[1].local_elements, 4096 / 4);        // bias
  EXPECT_EQ(l.gradient_sync_axes, std::vector<int>{kData});
  EXPECT_DOUBLE_EQ(l.work_fraction, 1.0 / 8);
}

TEST_F(OpShardingOnVggCifar, LinearSplitByContractionGivesPartialOutput) {
  const LayerLayouts l = layer_layouts(net, fc1, LayerSharding{{kData}, {}, {kModel}, {}}, kMesh, 64, DType::fp32);
  EXPECT_EQ(l.inputs[0], layout({{kData}, {kModel}}));
  EXPECT_EQ(l.output, layout({{kData}, {}}, {kModel}));
  EXPECT_EQ(l.input_gradients[0], l.inputs[0]);
  EXPECT_EQ(l.parameters[0].local_elements, 4096 * 512 / 4);
  EXPECT_EQ(l.parameters[1].local_elements, 4096);  // the bias is whole on every rank
}

TEST_F(OpShardingOnVggCifar, DataParallelConvHasReplicatedWeightsAndSyncsThem) {
  const int conv = net.find("conv2");
  const LayerLayouts l = layer_layouts(net, conv, LayerSharding{{kData, kModel}, {}, {}, {}}, kMesh, 64, DType::fp32);
  EXPECT_EQ(l.output, layout({{kData, kModel}, {}, {}, {}}));
  EXPECT_EQ(l.parameters[0].local_elements, 128 * 64 * 9);
  EXPECT_EQ(l.gradient_sync_axes, (std::vector<int>{kData, kModel}));
  EXPECT_TRUE(l.forward_internal.empty());
}

TEST_F(OpShardingOnVggCifar, SpatialConvExchangesOneHaloRowEachWay) {
  const int conv = net.find("conv2");  // 64 -> 128 channels on 16 x 16
  const LayerLayouts l = layer_layouts(net, conv, LayerSharding{{kData}, {}, {}, {kModel}}, kMesh, 8, DType::fp32);
  EXPECT_EQ(l.inputs[0], layout({{kData}, {}, {kModel}, {}}));
  ASSERT_EQ(l.forward_internal.size(), 1u);
  const Collective& halo = l.forward_internal[0];
  EXPECT_EQ(halo.kind, CollectiveKind::halo_exchange);
  EXPECT_EQ(halo.halo_rows, 1);
  // One row of the local input: 8/2 samples x 64 channels x 16 columns x 4 bytes.
  EXPECT_EQ(halo.row_bytes, 4 * 64 * 16 * 4);
  EXPECT_EQ(l.gradient_sync_axes, (std::vector<int>{kData, kModel}));
}

TEST_F(OpShardingOnVggCifar, ErrorsNameTheLayerAndTheRole) {
  const int relu = net.find("relu1");
  try {
    layer_layouts(net, relu, LayerSharding{{}, {}, {kModel}, {}}, kMesh, 64, DType::fp32);
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_STREQ(e.what(), "layer 'relu1': role 'in': a relu layer cannot be split this way");
  }
  const int fc3 = net.find("fc3");  // 10 classes over 4 ranks
  try {
    layer_layouts(net, fc3, LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 64, DType::fp32);
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'fc3': role 'out': 10 elements of dimension 1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(layer_layouts(net, fc1, LayerSharding{{kData}, {kData}, {}, {}}, kMesh, 64, DType::fp32), PlanError);
  EXPECT_THROW(layer_layouts(net, fc1, LayerSharding{{kData}, {}, {}, {kModel}}, kMesh, 64, DType::fp32), PlanError);
  EXPECT_THROW(layer_layouts(net, fc1, LayerSharding{{7}, {}, {}, {}}, kMesh, 64, DType::fp32), PlanError);
  // A batch of 6 does not split 8 ways.
  EXPECT_THROW(layer_layouts(net, fc1, LayerSharding{{kData, kModel}, {}, {}, {}}, kMesh, 6, DType::fp32), PlanError);
}

TEST(OpSharding, BatchnormOverASplitBatchReducesItsStatistics) {
  const model::Model net = model::build_zoo_model("resnet18");
  const LayerLayouts l =
      layer_layouts(net, net.find("bn1"), LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 32, DType::fp32);
  ASSERT_EQ(l.forward_internal.size(), 1u);
  EXPECT_EQ(l.forward_internal[0].kind, CollectiveKind::all_reduce);
  EXPECT_EQ(l.forward_internal[0].axes, std::vector<int>{kData});
  EXPECT_EQ(l.forward_internal[0].buffer_bytes, 2 * (64 / 4) * 8);  // fp64 sum and sum of squares per local channel
}

TEST(OpSharding, AttentionSplitsWholeHeadsAndConvStridesCannotSplitHeight) {
  const model::Model gpt = model::build_zoo_model("gpt:layers=1,hidden=64,heads=4,seq=16,vocab=100,positions=16");
  const LayerLayouts l =
      layer_layouts(gpt, gpt.find("h0.attn.core"), LayerSharding{{kData}, {kModel}, {}, {}}, kMesh, 4, DType::bf16);
  EXPECT_EQ(l.inputs[0], layout({{kData}, {}, {kModel}}));
  const Mesh eight({{"model", 8}});
  EXPECT_THROW(layer_layouts(gpt, gpt.find("h0.attn.core"), LayerSharding{{}, {0}, {}, {}}, eight, 4, DType::bf16),
               PlanError);  // 4 heads over 8 ranks
  const model::Model resnet = model::build_zoo_model("resnet18");
  EXPECT_THROW(layer_layouts(resnet, resnet.find("conv1"), LayerSharding{{}, {}, {}, {kModel}}, kMesh, 8, DType::fp32),
               PlanError);  // 7x7 stride 2
}

TEST(OpSharding, TiedHeadOwnsNoWeightAndVocabSplitEmbeddingIsPartial) {
  const model::Model gpt = model::build_zoo_model("gpt:layers=1,hidden=64,heads=4,seq=16,vocab=100,positions=16");
  const LayerLayouts head =
      layer_layouts(gpt, gpt.find("lm_head"), LayerSharding{{kData}, {}, {}, {}}, kMesh, 4, DType::fp32);
  EXPECT_TRUE(head.parameters.empty());
  const Mesh two({{"data", 2}, {"model", 2}});
  const LayerLayouts wte =
      layer_layouts(gpt, gpt.find("wte"), LayerSharding{{kData}, {}, {kModel}, {}}, two, 4, DType::fp32);
  EXPECT_EQ(wte.output, layout({{kData}, {}, {}}, {kModel}));
  EXPECT_EQ(wte.parameters[0].local_elements, 50 * 64);
}

}  // namespace
}  // namespace splitbrain::plans
