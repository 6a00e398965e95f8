// Every flag the Megatron-LM export writes is one of Megatron-LM's own: the flags of the launch
// scripts (their bash arrays, not torchrun's options) against tests/cli/megatron_arguments.txt,
// the add_argument names of Megatron-LM's megatron/training/arguments.py at the commit its header
// names (tools/megatron_argument_flags.py writes it from a copy of that file). Checked for the
// GPT and Llama plans the export tests pin (their goldens) and for rankings of small GPTs and
// Llamas on 8 GPUs, which reach tensor, sequence and pipeline parallelism, ZeRO 1 and
// recomputation, in bf16, fp16 and fp32, with Adam and SGD.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/export_files.h"

namespace splitbrain::testing_support {
namespace {

namespace fs = std::filesystem;

// Flags the export writes that Megatron-LM added after the commit of megatron_arguments.txt: none
// since the list was read at 000c4ac2, which defines every flag the export writes. A flag
// listed here is accepted without being in the fixture; regenerating the list from a newer
// arguments.py that has it fails ListedNewerFlagsAreNotInTheFixture until it is taken off here.
const std::set<std::string> kNewerThanFixture = {};

std::set<std::string> megatron_flags() {
  std::istringstream lines(read_file(fs::path(SPLITBRAIN_SOURCE_DIR) / "tests" / "cli" / "megatron_arguments.txt"));
  std::set<std::string> flags;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != '#') flags.insert(line);
  }
  return flags;
}

// The "--" words of the bash arrays (NAME=( ... )) of a launch script: pretrain_gpt.py's flags.
std::vector<std::string> written_flags(const std::string& script) {
  std::istringstream lines(script);
  std::vector<std::string> flags;
  bool in_array = false;
  for (std::string line; std::getline(lines, line);) {
    if (!in_array) {
      in_array = line.ends_with("=(");
      continue;
    }
    if (line == ")") {
      in_array = false;
      continue;
    }
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      if (word.starts_with("--")) flags.push_back(word);
    }
  }
  return flags;
}

// Every launch.sh under `dir` (an export folder, a ranking's folders, or the goldens).
std::vector<fs::path> launch_scripts(const fs::path& dir) {
  std::vector<fs::path> scripts;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "launch.sh") scripts.push_back(entry.path());
  }
  std::sort(scripts.begin(), scripts.end());
  return scripts;
}

// Checks the flags of every Megatron-LM launch under `dir`; returns how many flags it checked.
size_t expect_megatron_flags(const fs::path& dir) {
  static const std::set<std::string> known = megatron_flags();
  size_t checked = 0;
  for (const fs::path& script : launch_scripts(dir)) {
    const std::string text = read_file(script);
    if (text.find("pretrain_gpt.py") == std::string::npos) continue;
    const std::vector<std::string> flags = written_flags(text);
    EXPECT_NE(std::find(flags.begin(), flags.end(), "--num-layers"), flags.end()) << script << " read no model flags";
    for (const std::string& flag : flags) {
      EXPECT_TRUE(known.contains(flag) || kNewerThanFixture.contains(flag))
          << script << " writes " << flag << ", which Megatron-LM's arguments.py does not define";
    }
    checked += flags.size();
  }
  return checked;
}

TEST(MegatronFlags, FixtureListsMegatronLmArguments) {
  const std::set<std::string> flags = megatron_flags();
  EXPECT_GT(flags.size(), 500u);
  for (const char* flag : {"--tensor-model-parallel-size", "--swiglu", "--normalization", "--num-query-groups",
                           "--position-embedding-type", "--use-distributed-optimizer", "--local-rank", "--rotary-base",
                           "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
                           "--grad-reduce-in-bf16", "--num-experts", "--moe-router-topk",
                           "--moe-expert-capacity-factor", "--expert-model-parallel-size", "--context-parallel-size"}) {
    EXPECT_TRUE(flags.contains(flag)) << flag;
  }
}

TEST(MegatronFlags, ListedNewerFlagsAreNotInTheFixture) {
  const std::set<std::string> flags = megatron_flags();
  for (const std::string& flag : kNewerThanFixture) EXPECT_FALSE(flags.contains(flag)) << flag;
}

TEST(MegatronFlags, GoldenExportsWriteMegatronLmFlags) { EXPECT_GT(expect_megatron_flags(kExportGoldenDir), 50u); }

// A 4-layer GPT on 2 pipeline stages of 2 chunks each (interleaved 1F1B), recomputed.
TEST(MegatronFlags, InterleavedGptWritesMegatronLmFlags) {
  const std::string plan = write_temp_file("flags-interleaved.json", R"({
  "format": "splitbrain-plan", "version": 1,
  "model": "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16",
  "batch": 8, "mesh": {"pipe": 2}, "default": {},
  "pipeline": {"axis": "pipe", "stage_starts": ["h1.ln_1", "h2.ln_1", "h3.ln_1"], "micro_batches": 4,
               "schedule": "interleaved_1f1b", "virtual_stages": 2},
  "options": {"recompute": true}})");
  const fs::path dir = fresh_dir("flags-interleaved");
  const CommandResult r = run_splitbrain(export_command(plan, "megatron", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(expect_megatron_flags(dir), 20u);
}

// Context parallelism (plans/examples/llama-tiny-context-parallel-4.json: {data: 2, context: 2},
// every layer's sequence split over 'context') is --context-parallel-size; a sequence that is no
// multiple of 2 x CP is refused naming the axis; DeepSpeed's config cannot say it.
TEST(MegatronFlags, ContextParallelLlamaWritesMegatronLmFlags) {
  const std::string plan =
      (fs::path(SPLITBRAIN_SOURCE_DIR) / "plans" / "examples" / "llama-tiny-context-parallel-4.json").string();
  const fs::path dir = fresh_dir("flags-context-parallel");
  const CommandResult r = run_splitbrain(export_command(plan, "megatron", dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = read_file(dir / "launch.sh");
  EXPECT_NE(script.find("--context-parallel-size 2"), std::string::npos) << script;
  EXPECT_NE(script.find("Data parallel 2, tensor parallel 1, context parallel 2"), std::string::npos) << script;
  EXPECT_GT(expect_megatron_flags(dir), 20u);
  expect_refused(run_splitbrain(export_command(plan, "deepspeed", fresh_dir("flags-context-parallel-ds"))),
                 {"mesh: 'context'", "context parallelism"});
  const std::string uneven = write_temp_file("flags-context-parallel-12.json",
                                             R"({"format": "splitbrain-plan", "version": 1,
  "model": "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=12,vocab=96,rope_theta=10000",
  "batch": 8, "mesh": {"data": 2, "context": 4}, "default": {"batch": ["data"], "spatial": ["context"]}})");
  expect_refused(run_splitbrain(export_command(uneven, "megatron", fresh_dir("flags-context-parallel-12"))),
                 {"mesh: 'context'", "12 tokens over 4 ranks", "2 x 4"});
}

// The first plans of 8-GPU rankings Megatron-LM can run in its own form (tensor parallelism of 2
// to 8 ranks, sequence parallelism), for GPTs and Llamas (grouped-query and multi-head), in each
// precision and with each optimizer.
TEST(MegatronFlags, RankedGptAndLlamaPlansWriteMegatronLmFlags) {
  const std::vector<std::string> models = {
      "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16",
      "llama:layers=4,hidden=64,heads=4,kv_heads=2,ffn=128,seq=16,vocab=96,rope_theta=10000",
      "llama:layers=4,hidden=64,heads=4,kv_heads=4,ffn=128,seq=16,vocab=96,rope_theta=500000"};
  const std::vector<std::string> settings = {"--dtype bf16 --optimizer adam", "--dtype fp16 --optimizer sgd",
                                             "--dtype fp32 --optimizer adam"};
  for (size_t m = 0; m < models.size(); ++m) {
    for (size_t s = 0; s < settings.size(); ++s) {
      SCOPED_TRACE(models[m] + " " + settings[s]);
      const fs::path dir = fresh_dir("flags-ranking-" + std::to_string(m) + "-" + std::to_string(s));
      const CommandResult r =
          run_splitbrain("plan --model " + models[m] + " --cluster dgx-a100-80g --devices 8 --batch 32 " + settings[s] +
                         " --export megatron --export-top 6 --nearest --export-dir " + dir.string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_GT(expect_megatron_flags(dir), 20u);
    }
  }
}

}  // namespace
}  // namespace splitbrain::testing_support
