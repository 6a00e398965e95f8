// Llama plans as Megatron-LM launches (`splitbrain plan --export megatron`): the whole export of
// Llama 3 8B's best plan on 64 A100s pinned by a golden file, the flags of its RMSNorm, SwiGLU,
// rotary positions and query groups, and the refusals of the formats that cannot build a Llama.
//
// The golden lives in tests/cli/golden/export/; `bash tools/regenerate-export-goldens.sh`
// rewrites it with the others.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/export_files.h"

namespace splitbrain::testing_support {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTinyLlama =
    "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=16,vocab=96,rope_theta=10000";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Llama 3 8B on 8 DGX A100 nodes, bf16 and Adam: the best plan of the ranking that Megatron-LM
// can run in its own form (about 5 s of planning). As for GPT-3, the planner's tensor-parallel
// plans split the attention's output projection by outputs and its pipelines start stages at a
// block's MLP half, so the plain export finds none (each skip is printed); with --nearest the best
// it writes today is a 4-stage pipeline (ranks above it interleave uneven chunks, shard
// gradients with ZeRO 2 or make SplitBrain groups).
TEST(CliLlamaExport, Llama3On64GpusAsMegatronFlags) {
  const fs::path dir = fresh_dir("export-llama3");
  const CommandResult r = run_splitbrain(
      "plan --model llama3-8b --cluster dgx-a100-80g:nodes=8 --devices 64 --batch 64 --dtype bf16 --optimizer adam "
      "--export megatron --export-top 1 --nearest --export-dir " +
      dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path plan_dir = only_plan_dir(dir);
  expect_golden(plan_dir, "llama3-8b-64-megatron", {"launch.sh"});
  const std::string script = read_file(plan_dir / "launch.sh");
  for (const char* flag :
       {"--num-layers 32", "--hidden-size 4096", "--num-attention-heads 32", "--seq-length 8192",
        "--max-position-embeddings 8192", "--ffn-hidden-size 14336", "--group-query-attention --num-query-groups 8",
        "--normalization RMSNorm --norm-epsilon 1e-05", "--swiglu",
        "--position-embedding-type rope --rotary-base 500000", "--untie-embeddings-and-output-weights",
        "--disable-bias-linear", "--hidden-dropout 0 --attention-dropout 0", "--vocab-size 128256",
        "--global-batch-size 64", "--bf16", "--nnodes 8 --nproc_per_node 8"}) {
    EXPECT_TRUE(contains(script, flag)) << flag << "\n" << script;
  }
}

// Without query groups (kv_heads = heads) Megatron-LM's multi-head attention is the default.
TEST(CliLlamaExport, MultiHeadLlamaWritesNoQueryGroups) {
  const fs::path dir = fresh_dir("export-llama-mha");
  const CommandResult r = run_splitbrain(
      "plan --model llama:layers=2,hidden=64,heads=4,kv_heads=4,ffn=128,seq=16,vocab=96,rope_theta=10000 "
      "--devices 2 --batch 16 --export megatron --export-dir " +
      dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_file(only_plan_dir(dir) / "launch.sh");
  EXPECT_FALSE(contains(script, "--group-query-attention")) << script;
  EXPECT_FALSE(contains(script, "--num-query-groups")) << script;
  EXPECT_TRUE(contains(script, "--position-embedding-type rope --rotary-base 10000")) << script;
}

// Megatron-LM's form of a plan that keeps the attention whole still splits its heads and whole
// query groups evenly over the tensor-parallel ranks: 4 heads over 2 key/value heads go to 2
// ranks, not 4 (2 groups) nor 8 (4 heads).
TEST(CliLlamaExport, NearestFormRefusesUnevenQueryGroups) {
  const fs::path dir = fresh_dir("export-llama-groups");
  const CommandResult r = run_splitbrain(
      "plan --model llama:layers=4,hidden=64,heads=4,kv_heads=2,ffn=128,seq=16,vocab=96,rope_theta=10000 "
      "--cluster dgx-a100-80g --devices 8 --batch 32 --dtype bf16 --optimizer adam --export megatron "
      "--export-top 8 --nearest --export-dir " +
      dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "skipped: layer 'h0.attention.core': heads: 4 heads do not divide over 8 tensor-parallel "
                       "ranks"))
      << r.err;
  EXPECT_TRUE(contains(r.err,
                       "skipped: layer 'h0.attention.core': kv_heads: 2 key/value heads do not divide over 4 "
                       "tensor-parallel ranks"))
      << r.err;
  bool tensor_parallel = false;
  for (const auto& plan_dir : fs::directory_iterator(dir)) {
    const std::string script = read_file(plan_dir.path() / "launch.sh");
    EXPECT_FALSE(contains(script, "--tensor-model-parallel-size 4")) << script;
    EXPECT_FALSE(contains(script, "--tensor-model-parallel-size 8")) << script;
    tensor_parallel = tensor_parallel || contains(script, "--tensor-model-parallel-size 2");
  }
  EXPECT_TRUE(tensor_parallel) << "no plan of 2 tensor-parallel ranks written\n" << r.err;
}

// torchrun_train.py builds GPT-2 only; DeepSpeed's config does not build the network.
TEST(CliLlamaExport, TorchrunRefusesLlamaAndDeepSpeedWritesItsConfig) {
  const std::string plan = write_temp_file(
      "llama-data-parallel.json", std::string(R"({"format": "splitbrain-plan",
      "version": 1, "model": ")") + kTinyLlama +
                                      R"(", "batch": 8, "mesh": {"data": 2}, "default": {"batch": ["data"]}})");
  expect_refused(run_splitbrain(export_command(plan, "torchrun", fresh_dir("export-llama-torchrun"))),
                 {"Llama-style", "GPT-2-style decoders only", "export megatron"});
  const fs::path dir = fresh_dir("export-llama-deepspeed");
  const CommandResult r = run_splitbrain(export_command(plan, "deepspeed", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(read_file(dir / "ds_config.json"), "\"train_batch_size\": 8"));
}

// What Megatron-LM's flags cannot say is refused naming the layer: a rotary base that is no
// whole number (--rotary-base is an integer), norms of different epsilons (one --norm-epsilon),
// and a SwiGLU fed by other linears than its block's gate and up.
TEST(CliLlamaExport, WhatMegatronCannotExpressIsRefused) {
  const std::string model_file = write_temp_file("export-llama.json", "");
  const CommandResult saved = run_splitbrain(std::string("inspect --model ") + kTinyLlama + " --save " + model_file);
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const nlohmann::json llama = nlohmann::json::parse(read_file(model_file));
  struct Variant {
    std::string name, layer, field;
    nlohmann::json value;
    std::vector<std::string> refusal;
  };
  const std::vector<Variant> variants = {
      {"rope",
       "h1.attention.core",
       "rope_theta",
       10000.5,
       {"layer 'h0.attention.core'", "rope_theta", "--rotary-base"}},
      {"eps", "h1.ffn_norm", "eps", 1e-6, {"layer 'h1.ffn_norm'", "epsilon"}},
      {"bias", "h0.feed_forward.w3", "bias", true, {"layer 'h0.feed_forward.w3'", "without bias"}}};
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.name);
    nlohmann::json model = llama;
    bool found = false;
    for (nlohmann::json& layer : model.at("layers")) {
      if (layer.at("name") != variant.layer) continue;
      layer[variant.field] = variant.value;
      found = true;
    }
    ASSERT_TRUE(found) << variant.layer;
    // The rotary base must be the same in every block; change it in all of them.
    if (variant.name == "rope") {
      for (nlohmann::json& layer : model.at("layers")) {
        if (layer.at("op") == "self_attention") layer["rope_theta"] = 10000.5;
      }
    }
    const std::string variant_file = write_temp_file("export-llama-" + variant.name + ".json", model.dump());
    const std::string plan =
        write_temp_file("export-llama-" + variant.name + "-plan.json",
                        R"({"format": "splitbrain-plan", "version": 1, "model": ")" + variant_file +
                            R"(", "batch": 8, "mesh": {"data": 1}, "default": {}})");
    expect_refused(run_splitbrain(export_command(plan, "megatron", fresh_dir("export-llama-" + variant.name))),
                   variant.refusal);
  }
}

}  // namespace
}  // namespace splitbrain::testing_support
