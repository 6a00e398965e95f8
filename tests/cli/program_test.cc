// `splitbrain program`: the listing, the JSON contract (one object per instruction; alloc and
// free carry buffer, bytes and category), its memory walk against `simulate`, and bad input.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kExamples = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/";

TEST(CliProgram, ListingOfEveryExamplePlan) {
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    const CommandResult r = run_splitbrain("program --plan " + entry.path().string() + " --rank 0");
    ASSERT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
    for (const char* text :
         {"step program of rank 0", "forward", "backward", "alloc", "free", "optimizer", "memory walk peaks"}) {
      EXPECT_NE(r.out.find(text), std::string::npos) << entry.path() << ": " << text;
    }
  }
}

// Interleaved 1F1B: the header names the stage's chunks, each pass its chunk; in the JSON too.
TEST(CliProgram, InterleavedProgramsNameTheirChunks) {
  const std::string plan = kExamples + "vgg16-cifar10-interleaved-4.json";
  const CommandResult r = run_splitbrain("program --plan " + plan + " --rank 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step program of rank 2 (stage 1 of 2, interleaved_1f1b, chunks 1 and 3 of 4)"),
            std::string::npos)
      << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("forward       conv4 mb0 chunk 1"), std::string::npos);
  EXPECT_NE(r.out.find("backward      fc3 mb3 chunk 3"), std::string::npos);
  const CommandResult json = run_splitbrain("program --plan " + plan + " --rank 0 --json -");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::map<int, int> passes_by_chunk;
  const nlohmann::json program = nlohmann::json::parse(json.out);
  for (const auto& i : program.at("instructions")) {
    if (i.at("op") == "forward" || i.at("op") == "backward") ++passes_by_chunk[i.at("chunk").get<int>()];
  }
  ASSERT_EQ(passes_by_chunk.size(), 2u);  // stage 0 runs chunks 0 and 2
  EXPECT_GT(passes_by_chunk[0], 0);
  EXPECT_GT(passes_by_chunk[2], 0);
}

// The JSON walk of every rank equals `simulate`'s memory per rank (one compiler, one walk).
TEST(CliProgram, JsonWalkIsTheSimulatedMemory) {
  for (const char* file : {"vgg16-cifar10-pipeline-4.json", "vgg16-cifar10-interleaved-4.json"}) {
    const std::string plan = kExamples + file;
    const CommandResult simulated = run_splitbrain("simulate --plan " + plan + " --cluster dgx-a100-80g --json -");
    ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
    const auto prediction = nlohmann::json::parse(simulated.out);
    for (int rank = 0; rank < 4; ++rank) {
      const CommandResult r =
          run_splitbrain("program --plan " + plan + " --rank " + std::to_string(rank) + " --json -");
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto program = nlohmann::json::parse(r.out);
      EXPECT_EQ(program.at("format"), "splitbrain-step-program");
      EXPECT_EQ(program.at("rank"), rank);
      // Walk it here, from the JSON alone.
      std::map<std::string, int64_t> live;
      std::map<std::string, int64_t> peak;
      for (int id : program.at("resident")) {
        const auto& b = program.at("buffers").at(static_cast<size_t>(id));
        peak[b.at("category")] = live[b.at("category")] += b.at("bytes").get<int64_t>();
      }
      for (const auto& i : program.at("instructions")) {
        ASSERT_TRUE(i.contains("op") && i.contains("stream") && i.contains("after"));
        const std::string op = i.at("op");
        if (op != "alloc" && op != "free") continue;
        const std::string category = i.at("category");
        live[category] += (op == "alloc" ? 1 : -1) * i.at("bytes").get<int64_t>();
        peak[category] = std::max(peak[category], live[category]);
      }
      const auto& memory = prediction.at("ranks").at(static_cast<size_t>(rank)).at("memory");
      for (const char* category : {"params", "grads", "optimizer", "activations", "buffers"}) {
        EXPECT_EQ(peak[category], memory.at(category).get<int64_t>()) << "rank " << rank << " " << category;
        EXPECT_EQ(peak[category], program.at("memory_peaks_bytes").at(category).get<int64_t>()) << category;
      }
    }
  }
}

TEST(CliProgram, ARankOutsideTheMeshIsNamed) {
  const CommandResult r = run_splitbrain("program --plan " + kExamples + "fashion-vgg-splitbrain-2.json --rank 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rank 2: the plan's mesh {data: 1, model: 2} has ranks 0 to 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace splitbrain::testing_support
