// Mixture-of-experts plans as Megatron-LM launches: Mixtral 8x7B's export pinned by a golden file
// (a committed plan file: 4 pipeline stages, 16 data-parallel replicas, ZeRO 1, recomputation),
// the expert flags of a small MoE's ranked plans (capacity, tensor parallelism with whole
// experts), expert parallelism over the data-parallel ranks, and the refusal of blocks whose
// experts differ.
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

// 4 experts of width 128, top 2, each capped at 1.25 times its balanced share of tokens.
constexpr const char* kTinyMoe =
    "moe:layers=4,hidden=64,heads=4,kv_heads=2,ffn=128,seq=16,vocab=96,experts=4,top_k=2,capacity=125,"
    "rope_theta=10000";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliMoeExport, MixtralOn64GpusAsMegatronFlags) {
  const std::string plan = (kExportGoldenDir / "mixtral-8x7b-64.plan.json").string();
  const fs::path dir = fresh_dir("export-mixtral");
  const CommandResult r = run_splitbrain(export_command(plan, "megatron", dir, "dgx-a100-80g:nodes=8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(dir, "mixtral-8x7b-64-megatron", {"launch.sh"});
  const std::string script = read_file(dir / "launch.sh");
  for (const char* flag :
       {"--num-layers 32", "--hidden-size 4096", "--num-attention-heads 32", "--seq-length 4096",
        "--ffn-hidden-size 14336", "--group-query-attention --num-query-groups 8", "--swiglu",
        "--position-embedding-type rope --rotary-base 1000000",
        "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336", "--vocab-size 32000",
        "--pipeline-model-parallel-size 4", "--use-distributed-optimizer", "--nnodes 8 --nproc_per_node 8"}) {
    EXPECT_TRUE(contains(script, flag)) << flag << "\n" << script;
  }
  // Mixtral has no capacity (no token dropped) and the plan no tensor parallelism.
  EXPECT_FALSE(contains(script, "--moe-expert-capacity-factor")) << script;
  EXPECT_FALSE(contains(script, "--expert-tensor-parallel-size")) << script;
}

// Every exported plan of a small MoE's 8-GPU ranking writes its experts, top k and capacity
// (with the all-to-all dispatcher that drops past it); a tensor-parallel one keeps every expert
// whole on every rank, as the plan does, where Megatron-LM would split each expert's width.
TEST(CliMoeExport, RankedMoePlansWriteExpertFlags) {
  const fs::path dir = fresh_dir("export-moe-ranking");
  const CommandResult r = run_splitbrain(std::string("plan --model ") + kTinyMoe +
                                         " --cluster dgx-a100-80g --devices 8 --batch 32 --dtype bf16 --optimizer adam "
                                         "--export megatron --export-top 8 --nearest --export-dir " +
                                         dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool tensor_parallel = false;
  for (const auto& plan_dir : fs::directory_iterator(dir)) {
    const std::string script = read_file(plan_dir.path() / "launch.sh");
    EXPECT_TRUE(contains(script, "--num-experts 4 --moe-router-topk 2 --moe-ffn-hidden-size 128")) << script;
    EXPECT_TRUE(contains(script, "--moe-expert-capacity-factor 1.25 --moe-token-dispatcher-type alltoall")) << script;
    const bool split = !contains(script, "--tensor-model-parallel-size 1\n");
    EXPECT_EQ(contains(script, "--expert-tensor-parallel-size 1"), split) << script;
    tensor_parallel = tensor_parallel || split;
  }
  EXPECT_TRUE(tensor_parallel) << "no tensor-parallel plan written\n" << r.err;
}

// A tiny MoE whose moe layers split their 4 experts over the 4 data-parallel ranks (each rank
// routes the gathered tokens of all 4 through its expert): Megatron-LM's expert parallelism,
// --expert-model-parallel-size 4. fp16 and DeepSpeed are refused naming the moe layer.
std::string expert_parallel_plan(const std::string& dtype) {
  std::string layers;
  for (int block = 0; block < 4; ++block) {
    layers += std::string(block == 0 ? "" : ", ") + "\"h" + std::to_string(block) +
              ".feed_forward.moe\": {\"out\": [\"data\"]}";
  }
  return write_temp_file("export-moe-ep-" + dtype + ".json",
                         R"({"format": "splitbrain-plan", "version": 1, "model": ")" + std::string(kTinyMoe) +
                             R"(", "batch": 8, "dtype": ")" + dtype +
                             R"(", "mesh": {"data": 4}, "default": {"batch": ["data"]}, "layers": {)" + layers +
                             R"(}, "optimizer": {"kind": "adam"}})");
}

TEST(CliMoeExport, ExpertParallelPlanWritesExpertModelParallelSize) {
  const fs::path dir = fresh_dir("export-moe-ep");
  const CommandResult r = run_splitbrain(export_command(expert_parallel_plan("bf16"), "megatron", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_file(dir / "launch.sh");
  for (const char* part : {"--expert-model-parallel-size 4", "--num-experts 4 --moe-router-topk 2",
                           "Data parallel 4 (the experts split over 4 of them)"}) {
    EXPECT_TRUE(contains(script, part)) << part << "\n" << script;
  }
  expect_refused(
      run_splitbrain(export_command(expert_parallel_plan("bf16"), "deepspeed", fresh_dir("export-moe-ep-ds"))),
      {"layer 'h0.feed_forward.moe'", "expert parallelism"});
  expect_refused(
      run_splitbrain(export_command(expert_parallel_plan("fp16"), "megatron", fresh_dir("export-moe-ep-fp16"))),
      {"layer 'h0.feed_forward.moe'", "fp16"});
}

// Megatron-LM's --num-experts and --moe-* flags hold for every layer: a block whose experts
// differ from the first block's is refused naming its layer.
TEST(CliMoeExport, BlocksWithOtherExpertsAreRefused) {
  const std::string model_file = write_temp_file("export-moe.json", "");
  const CommandResult saved = run_splitbrain(std::string("inspect --model ") + kTinyMoe + " --save " + model_file);
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  nlohmann::json model = nlohmann::json::parse(read_file(model_file));
  bool found = false;
  for (nlohmann::json& layer : model.at("layers")) {
    if (layer.at("name") != "h2.feed_forward.moe") continue;
    layer["top_k"] = 1;
    found = true;
  }
  ASSERT_TRUE(found) << model.dump(1);
  const std::string variant_file = write_temp_file("export-moe-top1.json", model.dump());
  const std::string plan = write_temp_file("export-moe-top1-plan.json",
                                           R"({"format": "splitbrain-plan", "version": 1, "model": ")" + variant_file +
                                               R"(", "batch": 8, "mesh": {"data": 1}, "default": {}})");
  expect_refused(run_splitbrain(export_command(plan, "megatron", fresh_dir("export-moe-top1"))),
                 {"layer 'h2.feed_forward.moe'", "the experts of its first block", "--num-experts"});
}

}  // namespace
}  // namespace splitbrain::testing_support
