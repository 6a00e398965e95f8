// Llama 3 plans as torchtitan train configs (`export --format torchtitan`): Llama 3 8B's FSDP
// plan on 64 A100s (torchtitan's published run: local batch 1, 8,192 tokens, per-op selective
// checkpointing) pinned by a golden file, an interleaved pipeline's split points, every key
// written against torchtitan's own job_config.py fields (tests/cli/torchtitan_job_config_fields.txt,
// naming the commit read), and the refusals, each naming what torchtitan cannot express.
//
// The golden lives in tests/cli/golden/export/; `bash tools/regenerate-export-goldens.sh`
// rewrites it with the others.

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/export_files.h"

namespace splitbrain::testing_support {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::set<std::string> torchtitan_fields() {
  std::istringstream lines(
      read_file(fs::path(SPLITBRAIN_SOURCE_DIR) / "tests" / "cli" / "torchtitan_job_config_fields.txt"));
  std::set<std::string> fields;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != '#') fields.insert(line);
  }
  return fields;
}

// Every "key = value" of the TOML is a field of its [section] in torchtitan's JobConfig; returns
// how many keys it checked.
size_t expect_torchtitan_fields(const std::string& toml) {
  static const std::set<std::string> known = torchtitan_fields();
  std::istringstream lines(toml);
  std::string section;
  size_t checked = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const std::string key = line.substr(0, line.find(" = "));
    EXPECT_TRUE(known.contains(section + "." + key)) << "[" << section << "] " << key << " is no torchtitan field";
    ++checked;
  }
  return checked;
}

std::string plan_json(const std::string& model, const std::string& body) {
  return R"({"format": "splitbrain-plan", "version": 1, "model": ")" + model + "\", " + body + "}";
}

TEST(CliTorchtitanExport, Llama3FsdpOn64GpusAsTorchtitanToml) {
  const std::string plan = (kExportGoldenDir / "llama3-8b-fsdp-64.plan.json").string();
  const fs::path dir = fresh_dir("export-torchtitan-fsdp");
  const CommandResult r = run_splitbrain(export_command(plan, "torchtitan", dir, "dgx-a100-80g:nodes=8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(dir, "llama3-8b-64-torchtitan", {"torchtitan.toml"});
  const std::string toml = read_file(dir / "torchtitan.toml");
  for (const char* line :
       {"name = \"llama3\"\nflavor = \"8B\"", "local_batch_size = 1\nglobal_batch_size = 64\nseq_len = 8192",
        "mixed_precision_param = \"bfloat16\"", "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 64",
        "tensor_parallel_degree = 1\npipeline_parallel_degree = 1", "context_parallel_degree = 1",
        "mode = \"selective\"\nselective_ac_option = \"op\"", "--nnodes 8 --nproc_per_node 8"}) {
    EXPECT_TRUE(contains(toml, line)) << line << "\n" << toml;
  }
  EXPECT_GT(expect_torchtitan_fields(toml), 15u);
}

TEST(CliTorchtitanExport, TorchtitanFieldsFixtureNamesItsCommit) {
  const std::string fixture =
      read_file(fs::path(SPLITBRAIN_SOURCE_DIR) / "tests" / "cli" / "torchtitan_job_config_fields.txt");
  EXPECT_TRUE(contains(fixture, "job_config.py at commit 000204a4a8bf3d0f31adc44fc29855fbb6ea13d8")) << fixture;
  EXPECT_GT(torchtitan_fields().size(), 50u);
}

// 4 pipeline ranks of 2 chunks each (8 chunks of 4 blocks), 16 FSDP replicas, full recomputation:
// the chunks start at torchtitan's module names, the local batch holds the 8 micro-batches.
TEST(CliTorchtitanExport, InterleavedPipelineWritesSplitPoints) {
  const std::string plan = write_temp_file(
      "torchtitan-interleaved.json",
      plan_json("llama3-8b",
                R"("batch": 128, "dtype": "bf16", "mesh": {"pipe": 4, "data": 16}, "default": {"batch": ["data"]},
  "pipeline": {"axis": "pipe", "stage_starts": ["h4.attention_norm", "h8.attention_norm", "h12.attention_norm",
               "h16.attention_norm", "h20.attention_norm", "h24.attention_norm", "h28.attention_norm"],
               "micro_batches": 8, "schedule": "interleaved_1f1b", "virtual_stages": 2},
  "optimizer": {"kind": "adam"}, "options": {"recompute": true, "zero_stage": 3})"));
  const fs::path dir = fresh_dir("export-torchtitan-interleaved");
  const CommandResult r = run_splitbrain(export_command(plan, "torchtitan", dir, "dgx-a100-80g:nodes=8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string toml = read_file(dir / "torchtitan.toml");
  for (const char* line :
       {"local_batch_size = 8\nglobal_batch_size = 128", "data_parallel_shard_degree = 16",
        "pipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"",
        "pipeline_parallel_split_points = [\"layers.4\", \"layers.8\", \"layers.12\", \"layers.16\", \"layers.20\", "
        "\"layers.24\", \"layers.28\"]",
        "pipeline_parallel_microbatch_size = 1", "mode = \"full\"", "keeps each block's input"}) {
    EXPECT_TRUE(contains(toml, line)) << line << "\n" << toml;
  }
  EXPECT_GT(expect_torchtitan_fields(toml), 15u);
}

// FSDP over 8 replicas and context parallelism over 8 ranks (every layer's sequence split).
TEST(CliTorchtitanExport, ContextParallelPlanWritesItsDegree) {
  const std::string plan =
      write_temp_file("torchtitan-context.json",
                      plan_json("llama3-8b", R"("batch": 8, "dtype": "bf16", "mesh": {"data": 8, "context": 8},
  "default": {"batch": ["data"], "spatial": ["context"]}, "optimizer": {"kind": "adam"}, "options": {"zero_stage": 3})"));
  const fs::path dir = fresh_dir("export-torchtitan-context");
  const CommandResult r = run_splitbrain(export_command(plan, "torchtitan", dir, "dgx-a100-80g:nodes=8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string toml = read_file(dir / "torchtitan.toml");
  for (const char* line : {"data_parallel_shard_degree = 8", "context_parallel_degree = 8",
                           "local_batch_size = 1\nglobal_batch_size = 8"}) {
    EXPECT_TRUE(contains(toml, line)) << line << "\n" << toml;
  }
  EXPECT_GT(expect_torchtitan_fields(toml), 15u);
}

// What torchtitan cannot express is refused, naming the plan part: a model that is none of its
// flavors (named by the first hyperparameter that differs), a GPT, ZeRO 1 (its FSDP shards
// everything), DDP beside a pipeline, fp16, SGD, recomputing only the first blocks of a stage.
TEST(CliTorchtitanExport, WhatTorchtitanCannotExpressIsRefused) {
  struct Case {
    std::string name, model, body;
    std::vector<std::string> refusal;
  };
  const std::string data8 = R"("batch": 8, "mesh": {"data": 8}, "default": {"batch": ["data"]})";
  const std::vector<Case> cases = {
      {"flavor",
       "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,seq=16,vocab=96",
       data8,
       {"is none of torchtitan's llama3 flavors", "layers 2"}},
      {"gpt", "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16", data8, {"is no Llama 3 model"}},
      {"zero1", "llama3-8b", data8 + R"(, "options": {"zero_stage": 1})", {"options.zero_stage: 1", "ZeRO 3", "DDP"}},
      {"ddp-pipeline",
       "llama3-8b",
       R"("batch": 8, "mesh": {"pipe": 2, "data": 4}, "default": {"batch": ["data"]},
          "pipeline": {"axis": "pipe", "stage_starts": ["h16.attention_norm"], "micro_batches": 2})",
       {"options.zero_stage: 0", "runs DDP alone"}},
      {"fp16", "llama3-8b", data8 + R"(, "dtype": "fp16", "options": {"zero_stage": 3})", {"dtype: fp16"}},
      {"sgd",
       "llama3-8b",
       data8 + R"(, "optimizer": {"kind": "sgd_momentum"}, "options": {"zero_stage": 3})",
       {"optimizer.kind: sgd"}},
      {"recompute-blocks",
       "llama3-8b",
       data8 + R"(, "optimizer": {"kind": "adam"}, "options": {"zero_stage": 3, "recompute": true,
          "recompute_blocks": 4})",
       {"options.recompute_blocks: 4", "every block"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string plan = write_temp_file("torchtitan-" + c.name + ".json", plan_json(c.model, c.body));
    expect_refused(
        run_splitbrain(export_command(plan, "torchtitan", fresh_dir("export-torchtitan-" + c.name), "dgx-a100-80g")),
        c.refusal);
  }
}

}  // namespace
}  // namespace splitbrain::testing_support
