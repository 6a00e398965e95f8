// `splitbrain simulate`: the prediction contract, the trace file, and bad plan or cluster files.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kExamples = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/";

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
}

TEST(CliSimulate, SummaryNamesThePhases) {
  const CommandResult r = run_splitbrain("simulate --plan " + kExamples + "fashion-vgg-splitbrain-2.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text : {"iteration", "compute forward", "communication exposed", "memory per rank", "local-cpu"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
}

TEST(CliSimulate, JsonContractAndTrace) {
  const std::string trace = write_temp_file("trace.json", "");
  const CommandResult r =
      run_splitbrain("simulate --plan " + kExamples +
                     "vgg16-cifar10-pipeline-4.json --cluster dgx-a100-80g --json - --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc.at("iteration_seconds").get<double>(), 0.0);
  EXPECT_GT(doc.at("samples_per_second").get<double>(), 0.0);
  EXPECT_GT(doc.at("phases").at("bubble").get<double>(), 0.0);  // two stages, four micro-batches
  EXPECT_EQ(doc.at("ranks").size(), 4u);
  EXPECT_FALSE(doc.at("collectives").empty());
  std::ifstream in(trace);
  const auto events = nlohmann::json::parse(in).at("traceEvents");
  EXPECT_GT(events.size(), 100u);
}

TEST(CliSimulate, BadPlanFileNamesFileAndField) {
  const std::string plan = write_temp_file("bad-plan.json", R"({"format": "splitbrain-plan", "version": 1,
    "model": "fashion-vgg", "batch": 64, "mesh": {"data": 2}, "default": {"batch": ["dta"]}})");
  expect_rejected(run_splitbrain("simulate --plan " + plan), plan + ": default.batch: 'dta' is not a mesh axis");
}

TEST(CliSimulate, MalformedPlanFile) {
  const std::string plan =
      write_temp_file("malformed-plan.json", "{\"format\": \"splitbrain-plan\",\n\"version\": 1,,}");
  expect_rejected(run_splitbrain("simulate --plan " + plan), plan + ":2:");
}

TEST(CliSimulate, BadClusterFileNamesFileAndField) {
  const std::string cluster = write_temp_file("bad-cluster.json", R"({"format": "splitbrain-cluster", "version": 1,
    "name": "x", "description": "", "device": {}, "levels": [], "algorithms": {}})");
  expect_rejected(
      run_splitbrain("simulate --plan " + kExamples + "fashion-vgg-data-parallel-2.json --cluster " + cluster),
      cluster + ": device.");
}

TEST(CliSimulate, UnknownClusterAndTooFewDevices) {
  expect_rejected(run_splitbrain("simulate --plan " + kExamples + "fashion-vgg-data-parallel-2.json --cluster tpu-pod"),
                  "tpu-pod");
  expect_rejected(run_splitbrain("simulate --plan " + kExamples + "gpt2-small-megatron-8.json --cluster local-cpu"),
                  "has 2 devices but the plan's mesh {data: 2, model: 4} needs 8");
}

TEST(CliSimulate, MissingPlanFile) {
  expect_rejected(run_splitbrain("simulate --plan /nonexistent/plan.json"), "/nonexistent/plan.json: cannot open");
}

}  // namespace
}  // namespace splitbrain::testing_support
