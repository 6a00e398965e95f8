// Llama 3 8B on 64 A100 80GB in bf16 with Adam at batch 64 (8,192 tokens a sample): with the
// zoo's fused attention (each score row's log-sum-exp kept, not 32 heads x 8,192 x 8,192
// probabilities a layer) the planner's best plan fits without recomputing anything, and no
// ranked plan pays for selective recompute, which has nothing to drop in a fused core.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

TEST(CliLlamaFusedPlan, Llama3On64GpusFitsWithoutRecompute) {
  const CommandResult r = run_splitbrain(
      "plan --model llama3-8b --cluster dgx-a100-80g:nodes=8 --devices 64 --batch 64 --dtype bf16 --optimizer adam "
      "--json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  const auto limit = report.at("memory_limit_bytes").get<int64_t>();
  const nlohmann::json& plans = report.at("plans");
  ASSERT_FALSE(plans.empty());
  const nlohmann::json& best = plans.at(0);
  EXPECT_EQ(best.at("rank"), 1);
  EXPECT_TRUE(best.at("feasible").get<bool>()) << best.dump();
  EXPECT_LE(best.at("peak_memory_bytes").get<int64_t>(), limit) << best.dump();
  EXPECT_FALSE(best.at("recompute_activations").get<bool>()) << best.dump();
  EXPECT_FALSE(best.at("recompute_attention").get<bool>()) << best.dump();
  int feasible = 0;
  for (const nlohmann::json& plan : plans) {
    feasible += plan.at("feasible").get<bool>() ? 1 : 0;
    EXPECT_FALSE(plan.at("recompute_attention").get<bool>() && !plan.at("recompute_activations").get<bool>())
        << plan.dump();
  }
  EXPECT_GE(feasible, 10);
}

}  // namespace
}  // namespace splitbrain::testing_support
