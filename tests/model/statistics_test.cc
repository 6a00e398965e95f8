// Per-layer figures against hand counts, with the arithmetic in the comments.

#include <gtest/gtest.h>

#include "model/errors.h"
#include "model/graph_builder.h"
#include "model/statistics.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

// input [2, 6, 6] -> conv 3x3 (2->4, pad 1) -> relu -> maxpool 2 -> flatten -> linear 36->3 -> loss
Model small_net() {
  GraphBuilder b("small", "test");
  b.add("data", OpKind::input, InputAttrs{{2, 6, 6}, false}, {});
  Conv2dAttrs conv;
  conv.out_channels = 4;
  conv.kernel = {3, 3};
  conv.padding = {1, 1};
  b.add("conv", OpKind::conv2d, conv, {"data"});
  b.add("relu", OpKind::relu, NoAttrs{}, {"conv"});
  Pool2dAttrs pool;
  pool.kernel = {2, 2};
  b.add("pool", OpKind::maxpool, pool, {"relu"});
  b.add("flat", OpKind::flatten, NoAttrs{}, {"pool"});
  LinearAttrs fc;
  fc.out_features = 3;
  b.add("fc", OpKind::linear, fc, {"flat"});
  b.add("loss", OpKind::softmax_cross_entropy, NoAttrs{}, {"fc"});
  return b.build();
}

TEST(Statistics, SmallNetMatchesHandCount) {
  const Model net = small_net();
  const ModelStatistics s = compute_statistics(net, /*batch=*/5, DType::fp32);
  // conv: 4 x 2 x 3 x 3 + 4 = 76; fc: 36 x 3 + 3 = 111.
  EXPECT_EQ(s.params, 76 + 111);
  EXPECT_EQ(s.param_bytes, 187 * 4);

  const LayerStatistics& conv = s.layers[1];
  // outputs 4 x 6 x 6 = 144 per sample, 18 MACs each: forward 2 x 144 x 18 + 144 (bias) = 5328.
  EXPECT_DOUBLE_EQ(conv.forward_flops, 5 * 5328.0);
  // The data needs no gradient, so the first conv skips its input gradient.
  EXPECT_DOUBLE_EQ(conv.backward_input_flops, 0.0);
  EXPECT_DOUBLE_EQ(conv.backward_weight_flops, 5 * 5328.0);
  const LayerStatistics& fc = s.layers[5];
  // 36 x 3 MACs + 3 bias: forward 219; input gradient 216; weight gradient 219.
  EXPECT_DOUBLE_EQ(fc.forward_flops, 5 * 219.0);
  EXPECT_DOUBLE_EQ(fc.backward_input_flops, 5 * 216.0);

  // Kept for backward, per sample, fp32:
  //   data   72 values (read by conv)               288 B
  //   relu  144 values (its own output)              576 B
  //   pool   36 argmax indices x 1 B                  36 B (a 2x2 window: byte indices; its output
  //                                                       is read by nobody's backward)
  //   flat   36 values (read by fc)                  144 B
  //   loss    3 probabilities + 4 B label             16 B
  EXPECT_EQ(s.layers[0].saved_bytes, 5 * 288);
  EXPECT_EQ(s.layers[1].saved_bytes, 0);
  EXPECT_EQ(s.layers[2].saved_bytes, 5 * 576);
  EXPECT_EQ(s.layers[3].saved_bytes, 5 * 36);
  EXPECT_EQ(s.layers[4].saved_bytes, 5 * 144);
  EXPECT_EQ(s.layers[5].saved_bytes, 0);
  EXPECT_EQ(s.layers[6].saved_bytes, 5 * 16);
  EXPECT_EQ(s.saved_bytes, 5 * (288 + 576 + 36 + 144 + 16));
}

TEST(Statistics, HalfPrecisionHalvesValuesButNotIndicesOrMasks) {
  const Model net = small_net();
  const ModelStatistics full = compute_statistics(net, 1, DType::fp32);
  const ModelStatistics half = compute_statistics(net, 1, DType::bf16);
  EXPECT_EQ(half.param_bytes * 2, full.param_bytes);
  EXPECT_EQ(half.layers[3].saved_bytes, full.layers[3].saved_bytes);  // pool indices stay 1 B
  EXPECT_EQ(half.layers[2].saved_bytes * 2, full.layers[2].saved_bytes);
}

TEST(Statistics, TiedHeadCountsItsWeightOnceAndFlopsTwice) {
  const Model gpt = build_zoo_model("gpt:layers=1,hidden=64,heads=2,seq=16,vocab=100,positions=16");
  const Layer& head = gpt.layer(gpt.find("lm_head"));
  EXPECT_EQ(head.cost.params, 0);
  // 16 positions x 64 x 100 MACs.
  EXPECT_DOUBLE_EQ(head.cost.forward_flops, 2.0 * 16 * 64 * 100);
  EXPECT_TRUE(head.needs_input_gradient);
}

TEST(Statistics, AttentionFlopsCountBothProducts) {
  const Model gpt = build_zoo_model("gpt:layers=1,hidden=64,heads=2,seq=16,vocab=100,positions=16");
  const Layer& core = gpt.layer(gpt.find("h0.attn.core"));
  // Q K^T and P V: 2 x (16 x 16 x 64) MACs = 32768 MACs = 65536 FLOPs; softmax and scale:
  // 6 per score, 2 heads x 16 x 16 scores = 3072.
  EXPECT_DOUBLE_EQ(core.cost.forward_flops, 65536.0 + 3072.0);
  EXPECT_EQ(core.output_shape, (Shape{16, 64}));
  EXPECT_EQ(core.cost.saved.extra_elements, 2 * 16 * 16);
}

TEST(Statistics, TiedWeightMustMatchTheTable) {
  GraphBuilder b("tied", "test");
  b.add("tokens", OpKind::input, InputAttrs{{8}, true}, {});
  b.add("emb", OpKind::embedding, EmbeddingAttrs{50, 16, false}, {"tokens"});
  LinearAttrs head;
  head.out_features = 40;  // the table has 50 rows
  head.bias = false;
  head.tied_to = "emb";
  b.add("head", OpKind::linear, head, {"emb"});
  EXPECT_THROW(b.build(), ModelError);
}

TEST(Statistics, ResnetShortcutAddMakesADag) {
  const Model net = build_zoo_model("resnet18");
  const Layer& add = net.layer(net.find("layer2.0.add"));
  ASSERT_EQ(add.inputs.size(), 2u);
  EXPECT_EQ(net.layer(add.inputs[1]).name, "layer2.0.downsample.bn");
  // Topological order: every layer after the layers it reads.
  for (int i = 0; i < net.size(); ++i) {
    for (int producer : net.layer(i).inputs) EXPECT_LT(producer, i);
  }
}

}  // namespace
}  // namespace splitbrain::model
