// Launch configurations for other trainers (`splitbrain export`, `splitbrain plan --export`):
// golden files of the flag sets for the zoo's GPT plans, and refusals (exit 2 naming the part)
// for plans no trainer expresses.
//
// The goldens live in tests/cli/golden/export/. To regenerate them after a deliberate change, run
// `bash tools/regenerate-export-goldens.sh` (it also re-plans GPT-3 175B on 1,024 A100s for the
// committed plan file) and review the diff.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/export_files.h"

namespace splitbrain::testing_support {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTinyGpt = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";

// GPT-3 175B on 128 DGX A100 nodes: the planner's best plan (pipe 4, data 32, model 8, sequence
// parallel, ZeRO 1, recompute), committed as a plan file since planning it takes seconds. Its
// attention c_proj splits outputs, its embeddings split the hidden width and its stages start at
// ln_2: Megatron-LM's form differs, so the plain export refuses it naming the first layer, and
// --nearest writes Megatron-LM's form with the same sizes, the differences noted.
TEST(CliExport, Gpt3OnThousandGpusAsMegatronFlags) {
  const std::string plan = (kExportGoldenDir / "gpt3-175b-1024-top.plan.json").string();
  expect_refused(
      run_splitbrain(export_command(plan, "megatron", fresh_dir("export-gpt3-strict"), "dgx-a100-80g:nodes=128")),
      {"layer 'h0.attn.c_proj': splits out over 'model'", "row-parallel", "--nearest"});
  const fs::path dir = fresh_dir("export-gpt3");
  const CommandResult r =
      run_splitbrain(export_command(plan, "megatron", dir, "dgx-a100-80g:nodes=128") + " --nearest");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(dir, "gpt3-175b-1024-megatron", {"launch.sh"});
  const std::string script = read_file(dir / "launch.sh");
  for (const char* flag : {"--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 4", "--sequence-parallel",
                           "--use-distributed-optimizer", "--recompute-granularity full", "--num-layers 96",
                           "--hidden-size 12288", "--num-attention-heads 96", "--seq-length 2048", "--bf16",
                           "--global-batch-size 1536", "--nnodes 128 --nproc_per_node 8"}) {
    EXPECT_NE(script.find(flag), std::string::npos) << flag;
  }
  EXPECT_TRUE((fs::status(dir / "launch.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  // Tensor parallelism is Megatron-LM's; DeepSpeed alone and the DDP script refuse it by layer.
  expect_refused(run_splitbrain(export_command(plan, "deepspeed", fresh_dir("export-gpt3-ds"))),
                 {"layer 'wte'", "tensor parallelism", "export megatron"});
  expect_refused(run_splitbrain(export_command(plan, "torchrun", fresh_dir("export-gpt3-tr"))),
                 {"layer 'wte'", "data parallelism only"});
}

TEST(CliExport, Gpt2SmallMegatronExampleAsMegatronFlags) {
  const std::string plan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/gpt2-small-megatron-8.json";
  const fs::path dir = fresh_dir("export-gpt2");
  const CommandResult r = run_splitbrain(export_command(plan, "megatron", dir, "dgx-a100-80g"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(dir, "gpt2-small-megatron-8-megatron", {"launch.sh"});
}

// The tiny GPT's best 2-device plan each format expresses, straight from the planner: every plan
// ranked above it is skipped with the reason.
TEST(CliExport, TinyGptRankingInEveryFormat) {
  for (const std::string format : {"megatron", "deepspeed", "torchrun"}) {
    const fs::path dir = fresh_dir("export-tiny-" + format);
    const CommandResult r =
        run_splitbrain(std::string("plan --model ") + kTinyGpt + " --devices 2 --batch 16 --export " + format +
                       " --export-dir " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1) << "--export-top defaults to 1";
    const fs::path plan_dir = fs::directory_iterator(dir)->path();
    const int rank = std::stoi(plan_dir.filename().string().substr(0, 2));
    for (int above = 1; above < rank; ++above) {
      EXPECT_NE(r.err.find(fmt::format("[export] rank {} (", above)), std::string::npos) << above << "\n" << r.err;
    }
    std::vector<std::string> files = {"launch.sh"};
    if (format == "deepspeed") files.push_back("ds_config.json");
    expect_golden(plan_dir, "tiny-gpt-2-" + format, files);
    if (format == "torchrun") {
      EXPECT_EQ(read_file(plan_dir / "torchrun_train.py"),
                read_file(fs::path(SPLITBRAIN_SOURCE_DIR) / "tools" / "torchrun_train.py"));
    }
  }
}

TEST(CliExport, RankingSkipsWhatTheFormatCannotExpress) {
  // On one 8-GPU node the ranking holds per-layer tilings, grids, SplitBrain groups, domain (a
  // GPT's sequence split in every layer: context parallelism) and pipeline plans: torchrun skips
  // each with its reason and writes the one data-parallel plan.
  const fs::path dir = fresh_dir("export-skips");
  const CommandResult r =
      run_splitbrain(std::string("plan --model ") + kTinyGpt +
                     " --cluster dgx-a100-80g --devices 8 --batch 32 --export torchrun --export-top 2"
                     " --export-dir " +
                     dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  const fs::path plan_dir = fs::directory_iterator(dir)->path();
  EXPECT_TRUE(plan_dir.filename().string().ends_with("-data-parallel")) << plan_dir;
  const std::string script = read_file(plan_dir / "launch.sh");
  EXPECT_NE(script.find("--nnodes 1 --nproc_per_node 8"), std::string::npos) << script;
  for (const char* skipped :
       {"): skipped: layer 'data': is replicated over 'model'",
        "(domain-parallel s=2): skipped: mesh: 'space' splits every layer's sequence (context parallelism)",
        "skipped: pipeline.axis: 'pipe' makes 2 stages"}) {
    EXPECT_NE(r.err.find(skipped), std::string::npos) << skipped << "\n" << r.err;
  }
}

TEST(CliExport, SplitBrainPlanRefusedNamingTheLayer) {
  const std::string plan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/fashion-vgg-splitbrain-2.json";
  for (const char* format : {"megatron", "deepspeed", "torchrun"}) {
    const fs::path dir = fresh_dir(std::string("export-splitbrain-") + format);
    expect_refused(run_splitbrain(export_command(plan, format, dir)),
                   {"layer 'data': batch", "'model'", "layer 'fc1'", "SplitBrain group"});
    EXPECT_FALSE(fs::exists(dir)) << "nothing is written for a refused plan";
  }
}

TEST(CliExport, DomainPlanRefusedNamingTheLayer) {
  const std::string plan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/resnet18-spatial-2.json";
  expect_refused(run_splitbrain(export_command(plan, "deepspeed", fresh_dir("export-domain"))),
                 {"layer 'layer1.0.conv1'", "spatial", "'space'", "domain parallelism"});
}

TEST(CliExport, NonGptRefusedByFormatsThatBuildTheNetwork) {
  const std::string plan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/fashion-vgg-data-parallel-2.json";
  expect_refused(run_splitbrain(export_command(plan, "megatron", fresh_dir("export-vgg-megatron"))),
                 {"model 'fashion-vgg'", "GPT-2-style"});
  // DeepSpeed's config does not depend on the network: a data-parallel VGG exports.
  const fs::path dir = fresh_dir("export-vgg-deepspeed");
  const CommandResult r = run_splitbrain(export_command(plan, "deepspeed", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(dir / "ds_config.json").find("\"train_batch_size\""), std::string::npos);
}

// A GPT whose attention shares key/value heads or rotates positions is no GPT-2: the exports,
// which write GPT-2's flags, refuse it naming the attention layer rather than drop either.
TEST(CliExport, GroupedOrRotaryAttentionRefused) {
  const std::string model_file = write_temp_file("export-gpt.json", "");
  const CommandResult saved = run_splitbrain(
      "inspect --model gpt:layers=1,hidden=64,heads=4,seq=16,vocab=96,positions=16 "
      "--save " +
      model_file);
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const nlohmann::json gpt = nlohmann::json::parse(read_file(model_file));
  for (const std::string variant : {"gqa", "rope"}) {
    nlohmann::json model = gpt;
    for (nlohmann::json& layer : model.at("layers")) {
      if (variant == "gqa" && layer.at("name") == "h0.attn.c_attn") layer["out_features"] = (4 + 2 * 2) * 16;
      if (variant == "gqa" && layer.at("name") == "h0.attn.core") layer["kv_heads"] = 2;
      if (variant == "rope" && layer.at("name") == "h0.attn.core") layer["rope_theta"] = 10000.0;
    }
    const std::string variant_file = write_temp_file("export-" + variant + "-gpt.json", model.dump());
    const std::string plan = write_temp_file("export-" + variant + "-plan.json", R"({"format": "splitbrain-plan",
        "version": 1, "model": ")" + variant_file + R"(", "batch": 8, "mesh": {"data": 1}, "default": {}})");
    expect_refused(run_splitbrain(export_command(plan, "megatron", fresh_dir("export-" + variant))),
                   {"layer 'h0.attn.core'", "multi-head self-attention without rotary positions"});
  }
}

// A 4-layer GPT on 2 pipeline stages holding 2 chunks each (interleaved 1F1B), recomputed.
std::string interleaved_gpt_plan(const std::string& name, const std::string& options) {
  return write_temp_file(name, R"({
  "format": "splitbrain-plan", "version": 1,
  "model": "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16",
  "batch": 8, "mesh": {"pipe": 2}, "default": {},
  "pipeline": {"axis": "pipe", "stage_starts": ["h1.ln_1", "h2.ln_1", "h3.ln_1"], "micro_batches": 4,
               "schedule": "interleaved_1f1b", "virtual_stages": 2},
  "options": )" + options + "}");
}

TEST(CliExport, InterleavedPipelineAndRecomputation) {
  const std::string plan = interleaved_gpt_plan("interleaved.json", R"({"recompute": true})");
  const fs::path dir = fresh_dir("export-interleaved");
  const CommandResult r = run_splitbrain(export_command(plan, "megatron", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_file(dir / "launch.sh");
  for (const char* flag : {"--pipeline-model-parallel-size 2", "--num-layers-per-virtual-pipeline-stage 1",
                           "--recompute-method uniform --recompute-num-layers 1", "--micro-batch-size 2",
                           "--global-batch-size 8", "--nproc_per_node 2"}) {
    EXPECT_NE(script.find(flag), std::string::npos) << flag << "\n" << script;
  }
  expect_refused(run_splitbrain(export_command(plan, "deepspeed", fresh_dir("export-interleaved-ds"))),
                 {"pipeline.virtual_stages", "interleaved"});
  // The first 2 blocks of each chunk: the input and token embedding in chunk 0, a whole
  // transformer layer (its attention and MLP halves) in the others.
  const std::string blocks =
      interleaved_gpt_plan("interleaved-blocks.json", R"({"recompute": true, "recompute_blocks": 2})");
  expect_refused(run_splitbrain(export_command(blocks, "megatron", fresh_dir("export-blocks"))),
                 {"options.recompute_blocks", "chunk 0 recomputes 0 transformer layers"});
  const std::string zero = interleaved_gpt_plan("interleaved-zero.json", R"({"zero_stage": 2})");
  expect_refused(run_splitbrain(export_command(zero, "megatron", fresh_dir("export-zero2"))),
                 {"options.zero_stage: 2", "export deepspeed"});
}

TEST(CliExport, BadFlags) {
  expect_refused(run_splitbrain(std::string("plan --model ") + kTinyGpt + " --devices 2 --batch 16 --export megatron"),
                 {"--export-dir"});
  expect_refused(run_splitbrain(std::string("plan --model ") + kTinyGpt +
                                " --devices 2 --batch 16 --export onnx --export-dir /tmp/x"),
                 {"--export"});
}

}  // namespace
}  // namespace splitbrain::testing_support
