// The zoo's Llama models: the published parameter counts of Llama 3 8B, 70B and 405B from an
// independent closed formula and from the built graphs; a block's layers, widths and attention
// attributes; refusals of shapes that would build another model; and the attention half reused
// under an MLP of another kind.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "model/errors.h"
#include "model/statistics.h"
#include "model/zoo.h"
#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model {
namespace {

struct LlamaPublished {
  const char* model;
  int64_t layers, hidden, heads, kv_heads, ffn, vocab;
  int64_t params;  // Meta's model cards (Hugging Face's safetensors totals)
};

// Counted from the architecture alone: per block two RMSNorm scales, q (hidden x hidden), k and
// v (hidden x kv_heads head_dim each), o (hidden x hidden), the MLP's three hidden x ffn
// matrices; the token table, the final norm and the untied head. No biases anywhere.
int64_t llama_parameters(const LlamaPublished& p) {
  const int64_t kv_width = p.kv_heads * (p.hidden / p.heads);
  const int64_t block =
      2 * p.hidden + p.hidden * p.hidden + 2 * p.hidden * kv_width + p.hidden * p.hidden + 3 * p.hidden * p.ffn;
  return p.vocab * p.hidden + p.layers * block + p.hidden + p.hidden * p.vocab;
}

class LlamaPublishedCount : public testing::TestWithParam<LlamaPublished> {};

TEST_P(LlamaPublishedCount, FormulaAndBuiltModelMatchExactly) {
  const LlamaPublished& p = GetParam();
  EXPECT_EQ(llama_parameters(p), p.params);
  const Model model = build_zoo_model(p.model);
  EXPECT_EQ(model.parameter_count(), p.params);
  EXPECT_EQ(compute_statistics(model, 1, DType::bf16).params, p.params);
  const Layer& attention = model.layer(model.find("h0.attention.core"));
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().heads, p.heads);
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().kv_heads, p.kv_heads);
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().rope_theta, 500000.0);
  EXPECT_EQ(model.layer(model.find("h0.feed_forward.w1")).output_shape, (Shape{8192, p.ffn}));
  EXPECT_NO_THROW(model.find(fmt::format("h{}.feed_forward.residual", p.layers - 1)));
}

INSTANTIATE_TEST_SUITE_P(MetaModelCards, LlamaPublishedCount,
                         testing::Values(LlamaPublished{"llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8'030'261'248},
                                         LlamaPublished{"llama3-70b", 80, 8192, 64, 8, 28672, 128256, 70'553'706'496},
                                         LlamaPublished{"llama3-405b", 126, 16384, 128, 8, 53248, 128256,
                                                        405'853'388'800}),
                         [](const testing::TestParamInfo<LlamaPublished>& case_info) {
                           std::string name = case_info.param.model;
                           std::erase(name, '-');
                           return name;
                         });

TEST(Llama, BlockLayersWidthsAndAttributes) {
  const Model model = build_zoo_model("llama:layers=2,hidden=64,heads=8,kv_heads=2,ffn=96,seq=16,vocab=100");
  // Only the token table: positions are rotary, inside attention.
  int embeddings = 0;
  for (const Layer& layer : model.layers()) {
    EXPECT_NE(layer.kind, OpKind::dropout) << layer.name;
    EXPECT_NE(layer.kind, OpKind::layernorm) << layer.name;
    if (layer.kind == OpKind::embedding) ++embeddings;
    if (layer.kind == OpKind::linear) {
      EXPECT_FALSE(layer.attr<LinearAttrs>().bias) << layer.name;
      EXPECT_TRUE(layer.attr<LinearAttrs>().tied_to.empty()) << layer.name;
    }
    if (layer.kind == OpKind::rms_norm) {
      EXPECT_EQ(layer.attr<RmsNormAttrs>().epsilon, 1e-5) << layer.name;
    }
  }
  EXPECT_EQ(embeddings, 1);
  // q for 8 heads, k and v for 2 groups, each head 8 wide.
  EXPECT_EQ(model.layer(model.find("h1.attention.wqkv")).output_shape, (Shape{16, (8 + 2 * 2) * 8}));
  const Layer& attention = model.layer(model.find("h1.attention.core"));
  EXPECT_EQ(attention.output_shape, (Shape{16, 64}));
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().kv_heads, 2);
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().rope_theta, 500000.0);
  EXPECT_TRUE(attention.attr<SelfAttentionAttrs>().causal);
  const Layer& swiglu = model.layer(model.find("h1.feed_forward.swiglu"));
  EXPECT_EQ(swiglu.kind, OpKind::swiglu);
  ASSERT_EQ(swiglu.inputs.size(), 2u);  // gate (w1) first, then up (w3)
  EXPECT_EQ(model.layer(swiglu.inputs[0]).name, "h1.feed_forward.w1");
  EXPECT_EQ(model.layer(swiglu.inputs[1]).name, "h1.feed_forward.w3");
  EXPECT_EQ(model.layer(model.find("h1.feed_forward.w2")).output_shape, (Shape{16, 64}));
  EXPECT_EQ(model.layer(model.find("norm")).kind, OpKind::rms_norm);
  EXPECT_EQ(model.layer(model.find("output")).output_shape, (Shape{16, 100}));
  EXPECT_EQ(model.layers().back().kind, OpKind::softmax_cross_entropy);
}

TEST(Llama, RefusesHeadsThatDoNotDivideAndNamesTheOption) {
  try {
    build_zoo_model("llama:hidden=100,heads=8,kv_heads=8");
    FAIL() << "hidden 100 over 8 heads accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "zoo model 'llama:hidden=100,heads=8,kv_heads=8': option 'heads' (8) must divide 'hidden' (100)"),
              std::string::npos)
        << e.what();
  }
  try {
    build_zoo_model("llama:hidden=64,heads=8,kv_heads=3");
    FAIL() << "3 key/value heads for 8 heads accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("option 'kv_heads' (3) must divide 'heads' (8)"), std::string::npos)
        << e.what();
  }
}

TEST(Llama, AttentionHalfServesAnotherMlp) {
  // A block with Llama's attention half and an MLP of its own, as a mixture-of-experts block is.
  zoo::NetBuilder net("custom");
  const zoo::LlamaShape shape{.hidden = 32, .heads = 4, .kv_heads = 1, .ffn = 48, .rope_theta = 10000.0};
  auto x = net.embedding(net.input({8}, true), 50, shape.hidden, false, "emb");
  x = zoo::llama_attention(net, x, shape, "b.");
  x = net.add({x, net.linear(net.gelu(net.linear(x, 64, false, "b.up")), 32, false, "b.down")}, "b.mlp");
  net.loss(net.linear(x, 50, false, "head"));
  const Model model = net.build();
  EXPECT_EQ(model.layer(model.find("b.attention.wqkv")).output_shape, (Shape{8, (4 + 2) * 8}));
  EXPECT_EQ(model.layer(model.find("b.attention.core")).attr<SelfAttentionAttrs>().kv_heads, 1);
  EXPECT_EQ(model.layer(model.find("b.attention.residual")).output_shape, (Shape{8, 32}));
  EXPECT_EQ(model.layer(model.find("b.attention_norm")).kind, OpKind::rms_norm);
}

}  // namespace
}  // namespace splitbrain::model
