// How the simulator prices a moe layer, which has no kernel problem: by its unit's FLOPs on the
// gemm curve (ArithmeticPattern::matrix_product), each pass the slower of its arithmetic and its
// bytes. On a cluster with flat curves, a layer large enough to be compute-bound takes exactly
// its FLOPs over the gemm rate in each pass, and a sequence split over 2 ranks halves them.

#include <gtest/gtest.h>

#include "model/graph_builder.h"
#include "plans/op_sharding.h"
#include "sim/compute_cost.h"
#include "tests/sim/flat_cluster.h"

namespace splitbrain::sim {
namespace {

using model::OpKind;
using testing::flat_cluster;

// [256 positions, 256 features] -> a projection (so the input needs a gradient) -> 8 experts
// of 512, top 2: about 0.4 GFLOP a sample forward against about 13 MB of weights.
model::Model sparse_net() {
  model::GraphBuilder b("sparse", "test");
  b.add("data", OpKind::input, model::InputAttrs{{256, 256}, false}, {});
  model::LinearAttrs projection;
  projection.out_features = 256;
  projection.bias = false;
  b.add("proj", OpKind::linear, projection, {"data"});
  b.add("experts", OpKind::moe, model::MoeAttrs{.experts = 8, .top_k = 2, .ffn = 512, .capacity_factor = 0.0},
        {"proj"});
  return b.build();
}

constexpr double kGemmFlopsPerSecond = 0.8e12;
constexpr int64_t kBatch = 8;

TEST(MoePricing, ComputeBoundPassesTakeTheirFlopsAtTheGemmRate) {
  const model::Model net = sparse_net();
  const int moe = net.find("experts");
  const model::Layer& layer = net.layer(moe);
  EXPECT_EQ(op_class_of(layer), OpClass::gemm);
  const plans::Mesh mesh({{"data", 1}});
  const plans::LayerLayouts layouts = plans::layer_layouts(net, moe, {}, mesh, kBatch, model::DType::fp32);
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, moe, layouts, mesh, kBatch, model::DType::fp32);
  const double forward = kBatch * layer.cost.forward_flops / kGemmFlopsPerSecond;  // about 4 ms
  EXPECT_NEAR(t.forward, forward, forward * 1e-9);
  const double input = kBatch * layer.cost.backward_input_flops / kGemmFlopsPerSecond;
  EXPECT_NEAR(t.backward_input, input, input * 1e-9);
  const double weight = kBatch * layer.cost.backward_weight_flops / kGemmFlopsPerSecond;
  EXPECT_NEAR(t.backward_weight, weight, weight * 1e-9);

  // Split by position over 2 ranks: each computes half the tokens with every expert.
  const plans::Mesh pair({{"data", 2}});
  const plans::LayerSharding positions{{}, {}, {}, {0}};
  const plans::LayerLayouts split = plans::layer_layouts(net, moe, positions, pair, kBatch, model::DType::fp32);
  const LayerComputeSeconds half =
      layer_compute_seconds(flat_cluster(), net, moe, split, pair, kBatch, model::DType::fp32);
  EXPECT_NEAR(half.forward, forward / 2, forward * 1e-9);
}

}  // namespace
}  // namespace splitbrain::sim
