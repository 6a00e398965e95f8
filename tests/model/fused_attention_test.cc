// self_attention with fused (flash-style) memory: what it keeps for backward (each score row's
// fp32 log-sum-exp instead of the probabilities, whatever the dtype), the FLOPs of recomputing
// the scores in backward, the field in model files (written only when set, round trip), the
// refusal of dropout on probabilities it never keeps, NetBuilder's parameter and the zoo's
// Llama option.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/attention_kept.h"
#include "model/errors.h"
#include "model/model_json.h"
#include "model/statistics.h"
#include "model/zoo.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model {
namespace {

constexpr int64_t kTokens = 8, kHeadDim = 8, kHeads = 4, kKvHeads = 2;
constexpr int64_t kWidth = (kHeads + 2 * kKvHeads) * kHeadDim;

// data [8, 16] -> qkv linear -> self_attention (4 heads over 2 key/value heads) with `fields`.
Model attention_model(const std::string& fields) {
  const std::string text = R"({"format": "splitbrain-model", "version": 1, "name": "fused", "layers": [)"
                           R"({"name": "data", "op": "input", "shape": [8, 16]},)"
                           R"({"name": "qkv", "op": "linear", "out_features": )" +
                           std::to_string(kWidth) +
                           R"(},{"name": "attn", "op": "self_attention", "heads": 4, "kv_heads": 2)" + fields + "}]}";
  return model_from_json(nlohmann::json::parse(text), "fused.json");
}

const Layer& attention(const Model& net) { return net.layer(net.find("attn")); }

TEST(FusedAttention, KeepsOnlyEachScoreRowsLogSumExpInFp32) {
  const Model plain = attention_model("");
  const Model fused = attention_model(R"(, "fused": true)");
  EXPECT_FALSE(attention(plain).attr<SelfAttentionAttrs>().fused);
  EXPECT_TRUE(attention(fused).attr<SelfAttentionAttrs>().fused);
  const SavedForBackward& kept = attention(fused).cost.saved;
  EXPECT_EQ(kept.inputs, std::vector<int>{0});  // the fused q|k|v, as without fused
  EXPECT_FALSE(kept.output);
  EXPECT_EQ(kept.extra_elements, 0);                  // no probabilities
  EXPECT_EQ(kept.extra_bytes, kHeads * kTokens * 4);  // heads x T fp32 statistics
  EXPECT_EQ(attention(plain).cost.saved.extra_elements, kHeads * kTokens * kTokens);
  EXPECT_EQ(attention(plain).cost.saved.extra_bytes, 0);
  EXPECT_EQ(attention(plain).cost.saved.inputs, kept.inputs);

  // The statistics stay 4 bytes whatever the dtype; the probabilities follow it.
  for (const DType dtype : {DType::fp32, DType::bf16}) {
    const int64_t batch = 3;
    const int64_t plain_bytes = batch * kHeads * kTokens * kTokens * bytes_per_element(dtype);
    const int64_t fused_bytes = batch * kHeads * kTokens * 4;
    const ModelStatistics a = compute_statistics(plain, batch, dtype);
    const ModelStatistics b = compute_statistics(fused, batch, dtype);
    EXPECT_EQ(a.saved_bytes - b.saved_bytes, plain_bytes - fused_bytes) << dtype_name(dtype);
  }
}

TEST(FusedAttention, BackwardCountsTheRecomputedScoresAndProbabilities) {
  const double t = kTokens, hidden = kHeads * kHeadDim, scores = kHeads * t * t;
  const Model plain_model = attention_model(""), fused_model = attention_model(R"(, "fused": true)");
  const Layer& plain = attention(plain_model);
  const Layer& fused = attention(fused_model);
  EXPECT_EQ(fused.cost.forward_flops, plain.cost.forward_flops);
  // One more Q K^T (2 FLOPs per MAC, T x T x hidden MACs) and scale, subtract, exp per score.
  EXPECT_EQ(fused.cost.backward_input_flops, plain.cost.backward_input_flops + 2 * t * t * hidden + 3 * scores);
  EXPECT_EQ(fused.cost.params, 0);
  // Rotation adds the same with and without fused.
  const Model rope_plain_model = attention_model(R"(, "rope_theta": 10000)");
  const Model rope_fused_model = attention_model(R"(, "rope_theta": 10000, "fused": true)");
  const Layer& rope_plain = attention(rope_plain_model);
  const Layer& rope_fused = attention(rope_fused_model);
  EXPECT_EQ(rope_fused.cost.backward_input_flops - fused.cost.backward_input_flops,
            rope_plain.cost.backward_input_flops - plain.cost.backward_input_flops);
  EXPECT_EQ(rope_fused.cost.saved, fused.cost.saved);
}

TEST(FusedAttention, RoundTripsAndWritesFusedOnlyWhenSet) {
  const Model net = attention_model(R"(, "rope_theta": 10000, "fused": true)");
  const nlohmann::json written = model_to_json(net);
  const nlohmann::json& attn = written.at("layers").at(2);
  ASSERT_EQ(attn.at("op"), "self_attention");
  EXPECT_EQ(attn.at("fused"), true);
  const Model reloaded = model_from_json(nlohmann::json::parse(written.dump()), "roundtrip.json");
  EXPECT_EQ(attention(reloaded).attrs, attention(net).attrs);
  EXPECT_EQ(attention(reloaded).cost, attention(net).cost);
  EXPECT_FALSE(model_to_json(attention_model("")).at("layers").at(2).contains("fused"));
  EXPECT_FALSE(model_to_json(attention_model(R"(, "fused": false)")).at("layers").at(2).contains("fused"));
}

TEST(FusedAttention, DropoutOnTheProbabilitiesIsRefusedNamingTheField) {
  std::string message = "accepted";
  try {
    attention_model(R"(, "fused": true, "dropout": 0.1)");
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("layer 'attn': dropout:"), std::string::npos) << message;
  EXPECT_NE(message.find("fused attention keeps no probabilities"), std::string::npos) << message;
  EXPECT_NO_THROW(attention_model(R"(, "fused": true, "dropout": 0)"));
  EXPECT_NO_THROW(attention_model(R"(, "dropout": 0.1)"));
}

TEST(FusedAttention, KeptSizesFollowTheHeadsGiven) {
  // The executor asks with its local heads; the unit with all of them.
  SelfAttentionAttrs a{.heads = 2, .fused = true};
  EXPECT_EQ(attention_kept_per_sample(a, 16).bytes, 2 * 16 * kAttentionRowStatisticBytes);
  a.fused = false;
  EXPECT_EQ(attention_kept_per_sample(a, 16).elements, 2 * 16 * 16);
  a.dropout = 0.5;
  EXPECT_EQ(attention_kept_per_sample(a, 16).elements, 2 * 2 * 16 * 16);
  EXPECT_EQ(attention_kept_per_sample(a, 16).bytes, 2 * 16 * 16);
}

TEST(FusedAttention, NetBuilderAndTheLlamaOptionSetIt) {
  zoo::NetBuilder b("fused-builder");
  const auto qkv = b.linear(b.input({kTokens, 16}), kWidth);
  b.self_attention(qkv, kHeads, "attn", 0.0, kKvHeads, 10000.0, /*fused=*/true);
  EXPECT_TRUE(attention(b.build()).attr<SelfAttentionAttrs>().fused);

  // Llama keeps only the statistics by default; fused=0 keeps the probabilities.
  const std::string small = "llama:layers=1,hidden=32,heads=4,kv_heads=2,ffn=64,seq=16,vocab=64";
  const Model by_default = build_zoo_model(small);
  const Model unfused = build_zoo_model(small + ",fused=0");
  const Layer& core = by_default.layer(by_default.find("h0.attention.core"));
  EXPECT_TRUE(core.attr<SelfAttentionAttrs>().fused);
  EXPECT_FALSE(unfused.layer(unfused.find("h0.attention.core")).attr<SelfAttentionAttrs>().fused);
  EXPECT_EQ(core.cost.saved.extra_bytes, 4 * 16 * 4);
  const Model llama3 = build_zoo_model("llama3-8b");
  EXPECT_TRUE(llama3.layer(llama3.find("h0.attention.core")).attr<SelfAttentionAttrs>().fused);
  // GPT keeps its probabilities (its published comparisons do).
  const Model gpt = build_zoo_model("gpt:layers=1,hidden=32,heads=4,seq=16,vocab=64,positions=16");
  for (const Layer& layer : gpt.layers()) {
    if (layer.kind == OpKind::self_attention) {
      EXPECT_FALSE(layer.attr<SelfAttentionAttrs>().fused);
    }
  }
}

}  // namespace
}  // namespace splitbrain::model
