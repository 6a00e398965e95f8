// `splitbrain plan` as users run it: the ranking contract, emitted plans that simulate, the
// explanation, and bad requests refused with exit code 2.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
}

TEST(CliPlan, JsonContractAndEmittedPlansThatSimulate) {
  const std::string dir = std::filesystem::path(write_temp_file("plans-dir-marker", "")).parent_path() / "emitted";
  const CommandResult r = run_splitbrain(
      "plan --model vgg11-cifar10 --cluster dgx-a100-80g --devices 4 --batch 128 --json - --emit-plans " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& plans = doc.at("plans");
  ASSERT_GE(plans.size(), 6u);
  double previous = 0.0;
  bool previous_feasible = true;
  for (const auto& plan : plans) {
    for (const char* key : {"family", "mesh", "iteration_seconds", "peak_memory_bytes", "feasible", "plan_file"}) {
      EXPECT_TRUE(plan.contains(key)) << key;
    }
    const bool feasible = plan.at("feasible").get<bool>();
    if (feasible == previous_feasible) {
      EXPECT_GE(plan.at("iteration_seconds").get<double>(), previous);
    }
    previous = plan.at("iteration_seconds").get<double>();
    previous_feasible = feasible;
  }
  // The emitted plan of rank 1 simulates to the same time as the ranking says.
  const std::string file = plans[0].at("plan_file");
  const CommandResult sim = run_splitbrain("simulate --plan " + file + " --cluster dgx-a100-80g --json -");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sim.out).at("iteration_seconds").get<double>(),
                   plans[0].at("iteration_seconds").get<double>());
}

// --gradient-dtype fp32 under bf16: every plan file written keeps fp32 gradients, as a user
// would write them.
TEST(CliPlan, GradientTypeInEveryEmittedPlan) {
  const std::string dir = scratch_directory() / "gradient-dtype-plans";
  const CommandResult r = run_splitbrain(
      "plan --model gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16 --cluster dgx-a100-80g --devices 4 "
      "--batch 16 --dtype bf16 --optimizer adam --gradient-dtype fp32 --emit-plans " +
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    const auto doc = nlohmann::json::parse(in);
    EXPECT_EQ(doc.at("options").at("gradient_dtype"), "fp32") << entry.path();
    ++files;
  }
  EXPECT_GE(files, 6);
  expect_rejected(run_splitbrain("plan --model fashion-vgg --devices 2 --batch 64 --gradient-dtype fp64"),
                  "--gradient-dtype");
}

TEST(CliPlan, TableCsvAndExplanation) {
  const std::string csv = write_temp_file("ranking.csv", "");
  const CommandResult r =
      run_splitbrain("plan --model fashion-vgg --devices 2 --batch 64 --csv " + csv + " --explain 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"rank", "family", "speedup", "saving vs DP", "data-parallel", "rank 1:", "sharding", "fc1"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  }
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("rank,family,mesh,iteration_seconds", 0), 0u) << header;
}

TEST(CliPlan, MemoryLimitMarksPlansThatDoNotFit) {
  const CommandResult r = run_splitbrain(
      "plan --model vgg16-cifar10 --cluster dgx-a100-80g --devices 8 --batch 256 --memory-limit 150MB --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("memory_limit_bytes").get<int64_t>(), 150'000'000);
  for (const auto& plan : doc.at("plans")) {
    EXPECT_EQ(plan.at("feasible").get<bool>(), plan.at("peak_memory_bytes").get<int64_t>() <= 150'000'000);
  }
}

TEST(CliPlan, BadRequestsExitTwo) {
  expect_rejected(run_splitbrain("plan --model fashion-vgg --devices 0 --batch 64"), "--devices");
  expect_rejected(run_splitbrain("plan --model nosuchnet --devices 2 --batch 64"), "nosuchnet");
  expect_rejected(run_splitbrain("plan --model fashion-vgg --cluster nosuchcluster --devices 2 --batch 64"),
                  "nosuchcluster");
  expect_rejected(run_splitbrain("plan --model fashion-vgg --devices 2 --batch 64 --memory-limit lots"),
                  "--memory-limit");
  expect_rejected(run_splitbrain("plan --model fashion-vgg --devices 2 --batch 64 --explain 999"), "--explain");
  expect_rejected(run_splitbrain("plan --model fashion-vgg --devices 2 --batch 0"), "--batch");
}

TEST(CliPlan, AMillionDevicesIsRefusedQuickly) {
  expect_rejected(run_splitbrain("plan --model gpt3-175b --cluster cori-knl --devices 1000000 --batch 1000000"),
                  "cluster 'cori-knl' has 9688 devices");
}

// The mixture-of-experts entries are listed; a small one (4 experts, top 2) ranks on 4 devices,
// some emitted plans split its experts (expert parallelism) and none an expert's features, and
// its data-parallel plan simulates with every expert's parameters, gradients and
// momentum on each rank and time in the sparse layers.
TEST(CliPlan, MixtureOfExpertsRanksAndItsDataParallelPlanSimulates) {
  // `models` lists the generic entry and Mixtral 8x7B with Mistral AI's parameter count.
  const CommandResult listed = run_splitbrain("models --json -");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  int found = 0;
  const auto catalogue = nlohmann::json::parse(listed.out);
  for (const auto& model : catalogue.at("models")) {
    if (model.at("name") != "moe" && model.at("name") != "mixtral-8x7b") continue;
    EXPECT_EQ(model.at("params").get<int64_t>(), 46'702'792'704) << model.at("name");
    ++found;
  }
  EXPECT_EQ(found, 2);

  const std::string dir = scratch_directory() / "moe-plans";
  const CommandResult r = run_splitbrain(
      "plan --model moe:layers=2,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=256,seq=32,experts=4,top_k=2 "
      "--devices 4 --batch 8 --cluster dgx-a100-80g --json - --emit-plans " +
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plans = nlohmann::json::parse(r.out).at("plans");
  ASSERT_GE(plans.size(), 6u);
  std::string data_parallel;
  double previous = 0.0;
  bool expert_parallel = false;
  for (const auto& plan : plans) {
    EXPECT_TRUE(plan.at("feasible").get<bool>()) << plan.dump();
    EXPECT_GE(plan.at("iteration_seconds").get<double>(), previous);
    previous = plan.at("iteration_seconds").get<double>();
    if (plan.at("family") == "data-parallel") data_parallel = plan.at("plan_file");
    std::ifstream in(plan.at("plan_file").get<std::string>());
    const auto file = nlohmann::json::parse(in);
    for (const auto& [layer, sharding] : file.at("layers").items()) {
      if (layer.find(".moe") == std::string::npos) continue;
      // Expert parallelism splits the experts (out); an expert's features (in) are never split.
      expert_parallel = expert_parallel || sharding.contains("out");
      EXPECT_FALSE(sharding.contains("in")) << plan.at("plan_file") << " " << layer;
    }
  }
  ASSERT_FALSE(data_parallel.empty()) << r.out;
  EXPECT_TRUE(expert_parallel) << "no ranked plan splits the experts";

  const CommandResult sim = run_splitbrain("simulate --plan " + data_parallel + " --cluster dgx-a100-80g --json -");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto prediction = nlohmann::json::parse(sim.out);
  EXPECT_GT(prediction.at("iteration_seconds").get<double>(), 0.0);
  // Per block: two norms, q|k|v and o, the router and 4 experts of 3 x 64 x 128; the token
  // table, the final norm and the head: 254,784 fp32 parameters, all of them on every rank.
  constexpr int64_t kParameterBytes = 4 * 254'784;
  const auto& memory = prediction.at("ranks").at(0).at("memory");
  EXPECT_EQ(memory.at("params").get<int64_t>(), kParameterBytes);
  EXPECT_EQ(memory.at("grads").get<int64_t>(), kParameterBytes);
  EXPECT_EQ(memory.at("optimizer").get<int64_t>(), kParameterBytes);  // SGD's momentum
  EXPECT_GT(memory.at("activations").get<int64_t>(), 0);
  EXPECT_GE(prediction.at("peak_memory_bytes").get<int64_t>(), 3 * kParameterBytes);
  bool priced = false;
  for (const auto& layer : prediction.at("layers")) {
    if (layer.at("name") != "h1.feed_forward.moe") continue;
    priced = true;
    EXPECT_GT(layer.at("forward_seconds").get<double>(), 0.0);
    EXPECT_GT(layer.at("backward_input_seconds").get<double>(), 0.0);
    EXPECT_GT(layer.at("backward_weight_seconds").get<double>(), 0.0);
  }
  EXPECT_TRUE(priced) << sim.out;
}

}  // namespace
}  // namespace splitbrain::testing_support
