// self_attention's model unit with grouped-query attention (kv_heads) and rotary positions
// (rope_theta): the fused input's width, the output, FLOPs and saved bytes, the two fields in
// model files (written only when set, round trip), the refusals naming the layer and field, and
// NetBuilder's parameters for them.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/errors.h"
#include "model/model_json.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model {
namespace {

constexpr int64_t kTokens = 8, kHeadDim = 8;

// data [8, 16] -> qkv linear of `width` -> self_attention with the given extra fields.
Model attention_model(int64_t width, const std::string& attention_fields) {
  const std::string text = R"({"format": "splitbrain-model", "version": 1, "name": "gqa", "layers": [)"
                           R"({"name": "data", "op": "input", "shape": [8, 16]},)"
                           R"({"name": "qkv", "op": "linear", "out_features": )" +
                           std::to_string(width) + R"(},)" + R"({"name": "attn", "op": "self_attention", )" +
                           attention_fields + "}]}";
  return model_from_json(nlohmann::json::parse(text), "gqa.json");
}

std::string refusal(int64_t width, const std::string& attention_fields) {
  try {
    attention_model(width, attention_fields);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SelfAttentionGqa, GroupedInputGivesOutputOfTheQueryHeads) {
  // 4 query heads in 2 groups: (4 + 2 x 2) x 8 = 64 columns in, 4 x 8 = 32 out.
  const Model net = attention_model(64, R"("heads": 4, "kv_heads": 2)");
  const Layer& attn = net.layer(net.find("attn"));
  EXPECT_EQ(attn.output_shape, (Shape{kTokens, 4 * kHeadDim}));
  EXPECT_EQ(attn.attr<SelfAttentionAttrs>().kv_heads, 2);
  EXPECT_EQ(attn.attr<SelfAttentionAttrs>().kv_head_count(), 2);
  // Multi-query: one k and one v for all 4 heads.
  const Model mqa = attention_model(48, R"("heads": 4, "kv_heads": 1)");
  EXPECT_EQ(mqa.layer(mqa.find("attn")).output_shape, (Shape{kTokens, 4 * kHeadDim}));
}

TEST(SelfAttentionGqa, KvHeadsEqualToHeadsIsMultiHeadAttention) {
  const Model unset = attention_model(96, R"("heads": 4)");
  const Model equal = attention_model(96, R"("heads": 4, "kv_heads": 4)");
  const Layer& a = unset.layer(unset.find("attn"));
  const Layer& b = equal.layer(equal.find("attn"));
  EXPECT_EQ(a.attr<SelfAttentionAttrs>().kv_head_count(), 4);
  EXPECT_EQ(a.output_shape, (Shape{kTokens, 32}));
  EXPECT_EQ(b.output_shape, a.output_shape);
  EXPECT_EQ(b.cost, a.cost);
}

TEST(SelfAttentionGqa, FlopsCountEveryQueryHeadAndTheRotation) {
  const double t = kTokens, heads = 4, hidden = heads * kHeadDim;
  const double scores = heads * t * t;
  const double macs = 2 * t * t * hidden;  // Q K^T and P V of every query head
  const Model gqa = attention_model(64, R"("heads": 4, "kv_heads": 2)");
  const Layer& plain = gqa.layer(gqa.find("attn"));
  EXPECT_EQ(plain.cost.forward_flops, 2 * macs + 6 * scores);
  EXPECT_EQ(plain.cost.backward_input_flops, 4 * macs + 4 * scores);
  EXPECT_EQ(plain.cost.params, 0);
  // The same products as multi-head attention with as many query heads.
  const Model mha = attention_model(96, R"("heads": 4)");
  EXPECT_EQ(mha.layer(mha.find("attn")).cost.forward_flops, plain.cost.forward_flops);

  // Rotary positions: 3 FLOPs per rotated element forward, 6 backward, over q and k of
  // (heads + kv_heads) heads at every position.
  const Model rope = attention_model(64, R"("heads": 4, "kv_heads": 2, "rope_theta": 10000)");
  const Layer& rotated = rope.layer(rope.find("attn"));
  const double rotated_elements = t * (4 + 2) * kHeadDim;
  EXPECT_EQ(rotated.cost.forward_flops, plain.cost.forward_flops + 3 * rotated_elements);
  EXPECT_EQ(rotated.cost.backward_input_flops, plain.cost.backward_input_flops + 6 * rotated_elements);
  // Nothing more kept: the fused input and the probabilities, as without rotation.
  EXPECT_EQ(rotated.cost.saved, plain.cost.saved);
  EXPECT_EQ(rotated.cost.saved.inputs, std::vector<int>{0});
  EXPECT_EQ(rotated.cost.saved.extra_elements, static_cast<int64_t>(scores));
}

TEST(SelfAttentionGqa, RoundTripsAndWritesTheNewFieldsOnlyWhenSet) {
  const Model net = attention_model(64, R"("heads": 4, "kv_heads": 2, "rope_theta": 500000)");
  const nlohmann::json written = model_to_json(net);
  const nlohmann::json& attn = written.at("layers").at(2);
  ASSERT_EQ(attn.at("op"), "self_attention");
  EXPECT_EQ(attn.at("kv_heads"), 2);
  EXPECT_EQ(attn.at("rope_theta"), 500000.0);
  const Model reloaded = model_from_json(nlohmann::json::parse(written.dump()), "roundtrip.json");
  const Layer& again = reloaded.layer(reloaded.find("attn"));
  EXPECT_EQ(again.attrs, net.layer(net.find("attn")).attrs);
  EXPECT_EQ(again.cost, net.layer(net.find("attn")).cost);

  const nlohmann::json plain = model_to_json(attention_model(96, R"("heads": 4)")).at("layers").at(2);
  EXPECT_FALSE(plain.contains("kv_heads")) << plain.dump();
  EXPECT_FALSE(plain.contains("rope_theta")) << plain.dump();
}

TEST(SelfAttentionGqa, RefusalsNameTheLayerAndField) {
  EXPECT_NE(refusal(72, R"("heads": 4, "kv_heads": 3)").find("layer 'attn': kv_heads: 3 key/value heads do not divide"),
            std::string::npos)
      << refusal(72, R"("heads": 4, "kv_heads": 3)");
  EXPECT_NE(refusal(64, R"("heads": 4, "kv_heads": -1)").find("layer 'attn': kv_heads: must be positive"),
            std::string::npos);
  EXPECT_NE(refusal(64, R"("heads": 4, "kv_heads": 8)").find("layer 'attn': kv_heads:"), std::string::npos);
  // 60 columns are no whole number of (4 + 2 x 2) head widths.
  const std::string width = refusal(60, R"("heads": 4, "kv_heads": 2)");
  EXPECT_NE(width.find("layer 'attn': inputs: needs a fused q|k|v input [T, (heads 4 + 2 x kv_heads 2) x head_dim]"),
            std::string::npos)
      << width;
  // (4 + 2 x 2) x 3: head_dim 3 cannot be rotated in halves.
  const std::string odd = refusal(24, R"("heads": 4, "kv_heads": 2, "rope_theta": 10000)");
  EXPECT_NE(odd.find("layer 'attn': rope_theta:"), std::string::npos) << odd;
  EXPECT_NE(odd.find("head_dim 3 is odd"), std::string::npos) << odd;
  EXPECT_EQ(refusal(24, R"("heads": 4, "kv_heads": 2)"), "accepted");  // no rotation: odd is fine
  EXPECT_NE(refusal(64, R"("heads": 4, "kv_heads": 2, "rope_theta": -1)").find("layer 'attn': rope_theta: must be"),
            std::string::npos);
}

TEST(SelfAttentionGqa, NetBuilderSetsKvHeadsAndRopeTheta) {
  zoo::NetBuilder b("gqa-builder");
  const auto x = b.input({kTokens, 16});
  const auto qkv = b.linear(x, (4 + 2 * 1) * kHeadDim);
  b.self_attention(qkv, 4, "attn", 0.0, 1, 10000.0);
  const Model net = b.build();
  const auto& a = net.layer(net.find("attn")).attr<SelfAttentionAttrs>();
  EXPECT_EQ(a.kv_heads, 1);
  EXPECT_EQ(a.rope_theta, 10000.0);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(net.layer(net.find("attn")).output_shape, (Shape{kTokens, 4 * kHeadDim}));
}

}  // namespace
}  // namespace splitbrain::model
