// The zoo's mixture-of-experts models: Mixtral 8x7B's 46,702,792,704 parameters from an
// independent closed formula and from the built graph; a small block's layers, widths and
// attributes (Llama's attention half, a sparse MLP half); the capacity option; and refusals.

#include <gtest/gtest.h>

#include <string>

#include "model/errors.h"
#include "model/statistics.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

struct MoeShapeOfTheZoo {
  int64_t layers, hidden, heads, kv_heads, ffn, vocab, experts;
};

// Counted from the architecture alone: per block two RMSNorm scales, q and o (hidden x hidden),
// k and v (hidden x kv_heads head_dim each), the router (hidden x experts) and per expert three
// hidden x ffn matrices; the token table, the final norm and the untied head. No biases.
int64_t moe_parameters(const MoeShapeOfTheZoo& p) {
  const int64_t kv_width = p.kv_heads * (p.hidden / p.heads);
  const int64_t attention = 2 * p.hidden * p.hidden + 2 * p.hidden * kv_width;
  const int64_t experts = p.hidden * p.experts + p.experts * 3 * p.hidden * p.ffn;
  const int64_t block = 2 * p.hidden + attention + experts;
  return p.vocab * p.hidden + p.layers * block + p.hidden + p.hidden * p.vocab;
}

// Mistral AI's published total for Mixtral 8x7B (the Hugging Face safetensors total).
constexpr int64_t kMixtral8x7bParameters = 46'702'792'704;

TEST(MoeZoo, Mixtral8x7bFormulaAndBuiltModelMatchThePublishedCount) {
  const MoeShapeOfTheZoo mixtral{32, 4096, 32, 8, 14336, 32000, 8};
  EXPECT_EQ(moe_parameters(mixtral), kMixtral8x7bParameters);
  const Model model = build_zoo_model("mixtral-8x7b");
  EXPECT_EQ(model.parameter_count(), kMixtral8x7bParameters);
  EXPECT_EQ(compute_statistics(model, 1, DType::bf16).params, kMixtral8x7bParameters);
  const Layer& moe = model.layer(model.find("h31.feed_forward.moe"));
  EXPECT_EQ(moe.attr<MoeAttrs>(), (MoeAttrs{.experts = 8, .top_k = 2, .ffn = 14336, .capacity_factor = 0.0}));
  EXPECT_EQ(moe.output_shape, (Shape{4096, 4096}));
  const Layer& attention = model.layer(model.find("h0.attention.core"));
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().heads, 32);
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().kv_heads, 8);
  EXPECT_EQ(attention.attr<SelfAttentionAttrs>().rope_theta, 1'000'000.0);
  EXPECT_EQ(model.layer(model.find("output")).output_shape, (Shape{4096, 32000}));
  // The generic entry's defaults are Mixtral 8x7B's.
  EXPECT_EQ(build_zoo_model("moe").parameter_count(), kMixtral8x7bParameters);
}

TEST(MoeZoo, BlockIsLlamaAttentionThenASparseMlp) {
  const std::string spec = "moe:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=256,seq=32,experts=4,top_k=2";
  const Model model = build_zoo_model(spec);
  EXPECT_EQ(model.parameter_count(), moe_parameters({2, 64, 4, 2, 128, 256, 4}));
  for (const Layer& layer : model.layers()) {
    EXPECT_NE(layer.kind, OpKind::swiglu) << layer.name;  // the experts' SwiGLU is inside moe
    if (layer.kind == OpKind::linear) {
      EXPECT_FALSE(layer.attr<LinearAttrs>().bias) << layer.name;
    }
  }
  EXPECT_EQ(model.layer(model.find("h1.attention.wqkv")).output_shape, (Shape{32, (4 + 2 * 2) * 16}));
  const Layer& norm = model.layer(model.find("h1.ffn_norm"));
  EXPECT_EQ(norm.kind, OpKind::rms_norm);
  EXPECT_EQ(model.layer(norm.inputs[0]).name, "h1.attention.residual");
  const Layer& moe = model.layer(model.find("h1.feed_forward.moe"));
  EXPECT_EQ(moe.kind, OpKind::moe);
  EXPECT_EQ(moe.inputs, std::vector<int>{model.find("h1.ffn_norm")});
  EXPECT_EQ(moe.output_shape, (Shape{32, 64}));
  const Layer& residual = model.layer(model.find("h1.feed_forward.residual"));
  EXPECT_EQ(residual.inputs,
            (std::vector<int>{model.find("h1.attention.residual"), model.find("h1.feed_forward.moe")}));
  EXPECT_EQ(model.layers().back().kind, OpKind::softmax_cross_entropy);
}

TEST(MoeZoo, CapacityIsAPercentOfTheBalancedShare) {
  const Model model =
      build_zoo_model("moe:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,seq=32,experts=4,capacity=125");
  EXPECT_EQ(model.layer(model.find("h0.feed_forward.moe")).attr<MoeAttrs>().capacity_factor, 1.25);
}

TEST(MoeZoo, RefusesMoreChosenExpertsThanThereAreAndNamesTheOption) {
  try {
    build_zoo_model("moe:layers=1,hidden=64,heads=4,kv_heads=2,experts=2,top_k=3");
    FAIL() << "top 3 of 2 experts accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("option 'top_k' (3) must not exceed 'experts' (2)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(build_zoo_model("moe:hidden=100,heads=8,kv_heads=8"), ModelError);  // Llama's checks apply
}

}  // namespace
}  // namespace splitbrain::model
