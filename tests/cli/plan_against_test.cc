// `splitbrain plan --against FILE` and the lower bound under every ranking: the user's plan ranked
// among the planner's, the walk to the pick whose deltas add up to the total, and plan files of
// another job refused with exit code 2 naming the file and the field.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kGridPlan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/vgg11-cifar10-gholami-grid-4.json";
const std::string kPipelinePlan = std::string(SPLITBRAIN_SOURCE_DIR) + "/plans/examples/vgg16-cifar10-pipeline-4.json";
const std::string kVggJob = "plan --model vgg11-cifar10 --cluster dgx-a100-80g --devices 4 --batch 128";

void expect_rejected(const CommandResult& r, const std::string& expected_message) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(expected_message), std::string::npos) << "stderr: " << r.err;
}

// The differences add up to the total, which is pick - user.
void expect_differences_add_up(const nlohmann::json& against) {
  const auto& total = against.at("total");
  double seconds = 0.0;
  int64_t peak = 0;
  int64_t sent = 0;
  for (const auto& step : against.at("differences")) {
    seconds += step.at("delta_seconds").get<double>();
    peak += step.at("delta_peak_memory_bytes").get<int64_t>();
    sent += step.at("delta_bytes_sent_per_step").get<int64_t>();
    EXPECT_EQ(step.at("choices").size(), step.at("merged_because").size() + 1);
  }
  const double user_seconds = against.at("user").at("iteration_seconds").get<double>();
  EXPECT_NEAR(seconds, total.at("delta_seconds").get<double>(), 1e-12 * user_seconds);
  EXPECT_DOUBLE_EQ(total.at("delta_seconds").get<double>(),
                   against.at("pick").at("iteration_seconds").get<double>() - user_seconds);
  EXPECT_EQ(peak, total.at("delta_peak_memory_bytes").get<int64_t>());
  EXPECT_EQ(sent, total.at("delta_bytes_sent_per_step").get<int64_t>());
}

TEST(CliPlanAgainst, TableRanksTheUsersPlanAndWalksToThePick) {
  const CommandResult r = run_splitbrain(kVggJob + " --against " + kGridPlan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* text :
       {"yours: gholami-grid", "* your plan " /* the footnote */, "vs bound", "no plan can run faster than",
        "ms compute at peak + 0.000 ms on node", "your plan -> the pick (rank 1", "choice", "delta step ms",
        "delta peak mem/rank", "delta sent/rank", "mesh and layer shardings", "ZeRO stage", "total = pick - yours"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
}

TEST(CliPlanAgainst, JsonHoldsTheRankTheWalkAndTheBound) {
  const CommandResult r = run_splitbrain(kVggJob + " --against " + kGridPlan + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& bound = doc.at("lower_bound");
  const double bound_seconds = bound.at("seconds").get<double>();
  EXPECT_GT(bound_seconds, 0.0);
  EXPECT_EQ(bound.at("link_level"), "node");
  for (const auto& plan : doc.at("plans")) {
    EXPECT_GE(plan.at("iteration_seconds").get<double>(), bound_seconds);
    EXPECT_DOUBLE_EQ(plan.at("times_lower_bound").get<double>(),
                     plan.at("iteration_seconds").get<double>() / bound_seconds);
  }
  const auto& against = doc.at("against");
  EXPECT_EQ(against.at("plan_file"), kGridPlan);
  const int rank = against.at("rank").get<int>();
  ASSERT_GE(rank, 1);
  ASSERT_LE(rank, static_cast<int>(doc.at("plans").size()) + 1);
  // Ranked as the ranking orders: no faster plan after it, none slower before it.
  const double user_seconds = against.at("user").at("iteration_seconds").get<double>();
  for (int i = 0; i < static_cast<int>(doc.at("plans").size()); ++i) {
    const double seconds = doc.at("plans")[static_cast<size_t>(i)].at("iteration_seconds").get<double>();
    if (i + 1 < rank) {
      EXPECT_LE(seconds, user_seconds) << "rank " << i + 1;
    } else {
      EXPECT_GT(seconds, user_seconds) << "rank " << i + 1;
    }
  }
  EXPECT_EQ(against.at("pick_rank").get<int>(), 1);
  EXPECT_DOUBLE_EQ(against.at("pick").at("iteration_seconds").get<double>(),
                   doc.at("plans")[0].at("iteration_seconds").get<double>());
  EXPECT_FALSE(against.at("differences").empty());
  EXPECT_EQ(against.at("plans_priced").get<size_t>(), against.at("differences").size() + 1);
  expect_differences_add_up(against);
}

// A pipeline's stages cannot stay on a mesh without a pipe axis: the two choices are one step.
TEST(CliPlanAgainst, MergesAChoiceWhosePlanIsNotValid) {
  const CommandResult r = run_splitbrain(
      "plan --model vgg16-cifar10 --cluster dgx-a100-80g --devices 4 --batch 128 --json - --against " + kPipelinePlan);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto against = nlohmann::json::parse(r.out).at("against");
  const auto& first = against.at("differences").at(0);
  ASSERT_EQ(first.at("choices").size(), 2u);
  EXPECT_EQ(first.at("choices")[1], "pipeline stages");
  EXPECT_NE(first.at("merged_because")[0].get<std::string>().find("pipeline"), std::string::npos);
  expect_differences_add_up(against);

  const CommandResult table = run_splitbrain(
      "plan --model vgg16-cifar10 --cluster dgx-a100-80g --devices 4 --batch 128 --top 1 --against " + kPipelinePlan);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("mesh and layer shardings + pipeline stages [1]"), std::string::npos) << table.out;
  EXPECT_NE(
      table.out.find("[1] merged with the next choice: the plan with mesh and layer shardings changed is not valid"),
      std::string::npos)
      << table.out;
  // Ranked below the --top rows, the user's plan is shown all the same.
  EXPECT_NE(table.out.find("yours: pipeline"), std::string::npos) << table.out;
}

TEST(CliPlanAgainst, CsvMarksTheUsersRowAndTheBound) {
  const std::string csv = write_temp_file("against.csv", "");
  const CommandResult r = run_splitbrain(kVggJob + " --against " + kGridPlan + " --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find(",times_lower_bound,lower_bound_seconds,yours"), std::string::npos) << line;
  int yours = 0;
  while (std::getline(in, line)) {
    if (line.ends_with(",true")) ++yours;
  }
  EXPECT_EQ(yours, 1);
}

TEST(CliPlanAgainst, PlanFilesOfAnotherJobExitTwo) {
  expect_rejected(
      run_splitbrain("plan --model vgg11-cifar10 --cluster dgx-a100-80g --devices 4 --batch 64 --against " + kGridPlan),
      "--against " + kGridPlan + ": batch: 128, not --batch 64");
  expect_rejected(
      run_splitbrain("plan --model vgg11-cifar10 --cluster dgx-a100-80g --devices 8 --batch 128 --against " +
                     kGridPlan),
      "--against " + kGridPlan + ": mesh: {data: 2, model: 2} has 4 ranks, not --devices 8");
  expect_rejected(
      run_splitbrain("plan --model vgg16-cifar10 --cluster dgx-a100-80g --devices 4 --batch 128 --against " +
                     kGridPlan),
      "--against " + kGridPlan + ": model: the plan is for 'vgg11-cifar10', not --model vgg16-cifar10");
  expect_rejected(run_splitbrain(kVggJob + " --dtype bf16 --against " + kGridPlan),
                  "--against " + kGridPlan + ": dtype: fp32, not --dtype bf16");
  expect_rejected(run_splitbrain(kVggJob + " --optimizer adam --against " + kGridPlan),
                  "--against " + kGridPlan + ": optimizer.kind: sgd_momentum, not --optimizer adam");
  expect_rejected(run_splitbrain(kVggJob + " --against /no/such/plan.json"), "/no/such/plan.json");
  const std::string broken = write_temp_file("broken-plan.json", "{\"format\": \"splitbrain-plan\", \"version\": 1}");
  expect_rejected(run_splitbrain(kVggJob + " --against " + broken), broken);
}

TEST(CliPlanAgainst, EveryRankingPrintsTheBound) {
  const CommandResult r = run_splitbrain("plan --model fashion-vgg --devices 2 --batch 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no plan can run faster than"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vs bound"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace splitbrain::testing_support
