// The ONNX importer on nets PyTorch exports (tools/export_onnx_models.py, run by the ctest
// fixture `onnx_models`): each imports to the zoo's model of the same net, with the same
// parameters, FLOPs and activation memory, and is read through resolve_model like any model file.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "model/model_json.h"
#include "model/onnx/onnx_import.h"
#include "model/statistics.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

// The sizes of tools/pytorch_golden_gpt.py (MODEL), which the exported GPT uses.
constexpr const char* kTinyGpt = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";

std::filesystem::path exported(const std::string& file) {
  return std::filesystem::path(SPLITBRAIN_ONNX_MODELS_DIR) / file;
}

#define SKIP_WITHOUT_EXPORT(file)                                                                  \
  if (!std::filesystem::exists(exported(file))) {                                                  \
    GTEST_SKIP() << exported(file) << " was not exported: ctest's model_onnx_export makes it and " \
                 << "skips without python3-torch, python3-torchvision and python3-onnx";           \
  }

std::map<OpKind, int> kind_counts(const Model& model) {
  std::map<OpKind, int> counts;
  for (const Layer& layer : model.layers()) ++counts[layer.kind];
  return counts;
}

// Same layers by kind, and the same figures for a batch of 8 in bf16 (so the activation bytes,
// which depend on the dtype and on what backward keeps, are compared too).
void expect_same_figures(const Model& imported, const Model& zoo) {
  EXPECT_EQ(kind_counts(imported), kind_counts(zoo));
  const ModelStatistics a = compute_statistics(imported, 8, DType::bf16);
  const ModelStatistics b = compute_statistics(zoo, 8, DType::bf16);
  EXPECT_EQ(a.params, b.params);
  EXPECT_DOUBLE_EQ(a.forward_flops, b.forward_flops);
  EXPECT_DOUBLE_EQ(a.backward_flops, b.backward_flops);
  EXPECT_EQ(a.saved_bytes, b.saved_bytes);
}

TEST(OnnxImport, Resnet18MatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("resnet18.onnx");
  const Model net = import_onnx_model(exported("resnet18.onnx"));
  EXPECT_EQ(net.name(), "resnet18");
  EXPECT_EQ(net.parameter_count(), 11'689'512);
  expect_same_figures(net, build_zoo_model("resnet18"));
}

TEST(OnnxImport, Vgg11MatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("vgg11.onnx");
  const Model net = import_onnx_model(exported("vgg11.onnx"));
  EXPECT_EQ(net.parameter_count(), 132'863'336);
  expect_same_figures(net, build_zoo_model("vgg11"));
  // torchvision's AdaptiveAvgPool2d(7) on a 7x7 map is exported as a 1x1 AveragePool.
  const int pool = net.find("/avgpool/AveragePool");
  ASSERT_GE(pool, 0);
  EXPECT_EQ(net.layer(pool).kind, OpKind::adaptive_avgpool);
}

// Attention became one self_attention layer per block, causal, with 4 heads; the output head
// reads the token embedding's table, so it is tied rather than a second vocabulary matrix.
void expect_tiny_gpt(const Model& net) {
  const Model zoo = build_zoo_model(kTinyGpt);
  EXPECT_EQ(net.parameter_count(), zoo.parameter_count());
  expect_same_figures(net, zoo);
  int attention_layers = 0;
  for (const Layer& layer : net.layers()) {
    if (layer.kind == OpKind::self_attention) {
      ++attention_layers;
      EXPECT_EQ(layer.attr<SelfAttentionAttrs>().heads, 4);
      EXPECT_TRUE(layer.attr<SelfAttentionAttrs>().causal);
    }
    if (layer.kind == OpKind::linear && layer.attr<LinearAttrs>().in_features == 64 &&
        layer.attr<LinearAttrs>().out_features == 96) {
      EXPECT_EQ(layer.attr<LinearAttrs>().tied_to, "/wte/Gather");
    }
  }
  EXPECT_EQ(attention_layers, 2);
}

// The golden test's layout: a per-head q|k|v view of the fused projection, tanh GELU.
TEST(OnnxImport, TinyGptMatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("gpt.onnx");
  expect_tiny_gpt(import_onnx_model(exported("gpt.onnx")));
}

// nanoGPT's layout: q, k, v split off the fused projection, the exact (Erf) GELU.
TEST(OnnxImport, NanoGptStyleMatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("nanogpt.onnx");
  expect_tiny_gpt(import_onnx_model(exported("nanogpt.onnx")));
}

// q, k and v by three linear layers of one tensor: imported as one fused projection.
TEST(OnnxImport, SeparateQkvProjectionsMatchTheZoo) {
  SKIP_WITHOUT_EXPORT("gpt-separate-qkv.onnx");
  expect_tiny_gpt(import_onnx_model(exported("gpt-separate-qkv.onnx")));
}

// torch.onnx.export's default: the head reads a transposed copy of the token table (tied by its
// values) and the position lookup is folded into a constant [T, D] table added to the tokens.
TEST(OnnxImport, ConstantFoldedGptMatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("gpt-folded.onnx");
  expect_tiny_gpt(import_onnx_model(exported("gpt-folded.onnx")));
}

// The small Llama of tools/pytorch_golden_llama.py written as Hugging Face's LlamaForCausalLM.
// Imported attention keeps its probabilities (the zoo's fused=0).
constexpr const char* kSmallLlama =
    "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=16,vocab=96,rope_theta=10000,fused=0";

// LlamaRMSNorm became rms_norm (eps 1e-5), q/k/v one fused projection before grouped-query
// attention with `heads` over `kv_heads` and rotary base `rope_theta`, silu(gate) * up one
// swiglu: the zoo model `zoo_spec`'s layers, parameters, FLOPs and activation bytes.
void expect_llama(const Model& net, const char* zoo_spec, int64_t heads, int64_t kv_heads, double rope_theta) {
  const Model zoo = build_zoo_model(zoo_spec);
  EXPECT_EQ(net.parameter_count(), zoo.parameter_count());
  expect_same_figures(net, zoo);
  int attention_layers = 0;
  for (const Layer& layer : net.layers()) {
    if (layer.kind == OpKind::self_attention) {
      ++attention_layers;
      const auto& a = layer.attr<SelfAttentionAttrs>();
      EXPECT_EQ(a.heads, heads);
      EXPECT_EQ(a.kv_head_count(), kv_heads);
      EXPECT_EQ(a.rope_theta, rope_theta);
      EXPECT_TRUE(a.causal);
    }
    if (layer.kind == OpKind::rms_norm) {
      EXPECT_EQ(layer.attr<RmsNormAttrs>().epsilon, 1e-5) << layer.name;
    }
    if (layer.kind == OpKind::linear) {
      EXPECT_TRUE(layer.attr<LinearAttrs>().tied_to.empty()) << layer.name;
    }
  }
  EXPECT_EQ(attention_layers, 2);
}

TEST(OnnxImport, HuggingFaceStyleLlamaMatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("llama.onnx");
  expect_llama(import_onnx_model(exported("llama.onnx")), kSmallLlama, 4, 2, 10000.0);
}

// The cos and sin tables computed in forward: the tracer stores them as Constant nodes.
TEST(OnnxImport, LlamaWithRotaryTablesComputedInForwardMatchesTheZoo) {
  SKIP_WITHOUT_EXPORT("llama-rope-in-graph.onnx");
  expect_llama(import_onnx_model(exported("llama-rope-in-graph.onnx")), kSmallLlama, 4, 2, 10000.0);
}

// Llama 3's rotary base and head width (128): the base read back exactly from float tables.
TEST(OnnxImport, LlamaThreeRotaryBaseReadExactly) {
  SKIP_WITHOUT_EXPORT("llama-rope-500k.onnx");
  expect_llama(import_onnx_model(exported("llama-rope-500k.onnx")),
               "llama:layers=2,hidden=256,heads=2,kv_heads=1,ffn=96,seq=16,vocab=96,rope_theta=500000,fused=0", 2, 1,
               500000.0);
}

TEST(OnnxImport, ResolveModelReadsOnnxOnceRegistered) {
  SKIP_WITHOUT_EXPORT("resnet18.onnx");
  register_onnx_model_reader();
  EXPECT_EQ(resolve_model(exported("resnet18.onnx").string()).parameter_count(), 11'689'512);
}

TEST(OnnxImport, SavedJsonLoadsBackIdentical) {
  SKIP_WITHOUT_EXPORT("gpt.onnx");
  const Model net = import_onnx_model(exported("gpt.onnx"));
  const Model reloaded = model_from_json(model_to_json(net), "gpt.json");
  EXPECT_EQ(model_to_json(reloaded), model_to_json(net));
}

}  // namespace
}  // namespace splitbrain::model
