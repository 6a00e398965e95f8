// How the simulator prices an attention core, against hand arithmetic on a cluster with flat
// efficiency curves (tests/sim/flat_cluster.h): its two products on the gemm curve, then its
// passes over the scores at the memory rate; a share of the queries under context parallelism,
// the scores computed again in a fused core's backward, grouped key/value heads and rotary
// positions.

#include <gtest/gtest.h>

#include "model/graph_builder.h"
#include "sim/compute_cost.h"
#include "tests/sim/flat_cluster.h"

namespace splitbrain::sim {
namespace {

using model::OpKind;
using testing::flat_cluster;
using testing::layouts_of;

// x [128, width] -> qkv (a linear of the same width) -> core: 128 positions of one fused q|k|v.
model::Model attention_net(int64_t width, const model::SelfAttentionAttrs& attention) {
  model::GraphBuilder b("attention-net", "test");
  b.add("x", OpKind::input, model::InputAttrs{{128, width}, false}, {});
  model::LinearAttrs qkv;
  qkv.out_features = width;
  b.add("qkv", OpKind::linear, qkv, {"x"});
  b.add("core", OpKind::self_attention, attention, {"qkv"});
  return b.build();
}

TEST(ComputeCost, AttentionIsItsProductsPlusThePassesOverItsScores) {
  // x [128, 3 x 256] -> attention (4 heads): per sample, Q K^T and P V are 2 x 128 x 128 x 256
  // MACs = 16,777,216 FLOPs; the scores are 4 x 128 x 128 = 65,536 fp32 = 262,144 B.
  const model::Model net = attention_net(768, model::SelfAttentionAttrs{4, true});
  const plans::Mesh mesh({{"data", 1}});
  const int core = net.find("core");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, core, layouts_of(net, core, mesh, 2), mesh, 2, model::DType::fp32);
  // Forward, 2 samples: products 33,554,432 FLOPs at 0.8e12 = 41.94304 us, against qkv read
  // (2 x 128 x 768 x 4 = 786,432 B) and y written twice (2 x 262,144 B) = 1,310,720 B at 100e9 =
  // 13.1072 us: compute-bound. Then three passes over 524,288 B of scores: 15.72864 us.
  EXPECT_NEAR(t.forward, 41.94304e-6 + 15.72864e-6, 1e-12);
  // Backward: twice the products (83.88608 us; dY 262,144 + qkv 786,432 + dqkv written twice
  // 1,572,864 B = 26.2144 us: compute-bound) and six passes (31.45728 us).
  EXPECT_NEAR(t.backward_input, 83.88608e-6 + 31.45728e-6, 1e-12);
}

TEST(ComputeCost, ContextParallelAttentionIsItsShareOfTheQueries) {
  // The net above with its 128 positions split over 2 ranks (context parallelism): each rank's 64
  // queries against all 128 keys, so half the products and half the score passes; the fused
  // input read (and its gradient written) whole.
  const model::Model net = attention_net(768, model::SelfAttentionAttrs{4, true});
  const plans::Mesh mesh({{"context", 2}});
  const int core = net.find("core");
  const plans::LayerSharding context{{}, {}, {}, {0}};
  const LayerComputeSeconds t = layer_compute_seconds(
      flat_cluster(), net, core, layouts_of(net, core, mesh, 2, context), mesh, 2, model::DType::fp32);
  // Forward, 2 samples: products 16,777,216 FLOPs at 0.8e12 = 20.97152 us, against qkv read
  // (786,432 B) and the local y written twice (2 x 131,072 B) = 1,048,576 B at 100e9 = 10.48576
  // us: compute-bound. Three passes over 262,144 B of local scores: 7.86432 us.
  EXPECT_NEAR(t.forward, 20.97152e-6 + 7.86432e-6, 1e-12);
  // Backward: products 41.94304 us (dY 131,072 + qkv 786,432 + the whole dqkv written twice
  // 1,572,864 B = 24.90368 us: compute-bound) and six score passes (15.72864 us).
  EXPECT_NEAR(t.backward_input, 41.94304e-6 + 15.72864e-6, 1e-12);
}

TEST(ComputeCost, FusedAttentionRecomputesItsScoresInBackward) {
  // The net above with fused attention: forward as before; backward adds a third product (Q K^T
  // again, half of the two: 8,388,608 FLOPs a sample) and three passes over the scores (the
  // recomputed scores written, read and written as probabilities).
  model::SelfAttentionAttrs fused{4, true};
  fused.fused = true;
  const model::Model net = attention_net(768, fused);
  const plans::Mesh mesh({{"data", 1}});
  const int core = net.find("core");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, core, layouts_of(net, core, mesh, 2), mesh, 2, model::DType::fp32);
  EXPECT_NEAR(t.forward, 41.94304e-6 + 15.72864e-6, 1e-12);
  // Backward: 2.5 times the products (104.8576 us, still compute-bound) and nine score passes of
  // 524,288 B (47.18592 us).
  EXPECT_NEAR(t.backward_input, 104.8576e-6 + 47.18592e-6, 1e-12);
}

TEST(ComputeCost, GroupedAttentionKeepsItsProductsAndRotaryPositionsAddPasses) {
  // The net above with 4 query heads over 2 key/value heads (x [128, (4 + 2 x 2) x 64]) and
  // rotary positions: the same products, a narrower input, and passes over the rotated copies.
  const model::Model net = attention_net(512, model::SelfAttentionAttrs{4, true, 0.0, 2, 10000.0});
  const plans::Mesh mesh({{"data", 1}});
  const int core = net.find("core");
  const LayerComputeSeconds t =
      layer_compute_seconds(flat_cluster(), net, core, layouts_of(net, core, mesh, 2), mesh, 2, model::DType::fp32);
  // Forward: products 41.94304 us (compute-bound: qkv 524,288 B + y twice 524,288 B = 10.48576
  // us), three score passes 15.72864 us, and the rotation reading and writing the copies of q
  // and k (2 x 262,144 B each way: 1,048,576 B) 10.48576 us.
  EXPECT_NEAR(t.forward, 41.94304e-6 + 15.72864e-6 + 10.48576e-6, 1e-12);
  // Backward: products 83.88608 us, six score passes 31.45728 us, the rotation again and back
  // (2,097,152 B) 20.97152 us.
  EXPECT_NEAR(t.backward_input, 83.88608e-6 + 31.45728e-6 + 20.97152e-6, 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
