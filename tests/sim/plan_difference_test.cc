// The walk from a user's plan to the planner's pick (sim/search/plan_difference.h): its steps add
// up to the difference, each plan on the way is the one priced, and a plan no step can run is
// merged into the next step.

#include <gtest/gtest.h>

#include <filesystem>

#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "plans/plan_json.h"
#include "sim/search/families.h"
#include "sim/search/plan_difference.h"
#include "sim/search/planner.h"
#include "sim/simulation.h"
#include "planner_requests.h"

namespace splitbrain::sim {
namespace {

const plans::Plan& best_that_fits(const PlannerResult& result) {
  for (const PricedPlan& p : result.plans) {
    if (p.feasible) return p.plan;
  }
  return result.plans.front().plan;
}

// The deltas telescope to pick - user, each step starts where the one before ended, and each
// step's figures are those of its plan simulated anew.
void expect_walk_adds_up(const PlannerRequest& request, const plans::Plan& user, const PricedPlan& pick) {
  const PlanDifference walk = plan_difference(request, user, pick.plan);
  ASSERT_FALSE(walk.steps.empty());
  EXPECT_EQ(walk.plans_priced, static_cast<int>(walk.steps.size()) + 1);
  EXPECT_EQ(walk.pick.seconds, pick.prediction.iteration_seconds);
  EXPECT_EQ(walk.pick.peak_bytes, peak_memory_bytes(pick.prediction));
  double seconds = 0.0;
  int64_t peak = 0;
  int64_t sent = 0;
  PlanFigures previous = walk.user;
  for (const ChoiceStep& step : walk.steps) {
    EXPECT_EQ(step.before.seconds, previous.seconds);
    EXPECT_EQ(step.before.peak_bytes, previous.peak_bytes);
    const PlanFigures again = price_figures(request, step.plan_after);
    EXPECT_EQ(step.after.seconds, again.seconds) << step.choices.front();
    EXPECT_EQ(step.after.peak_bytes, again.peak_bytes) << step.choices.front();
    EXPECT_EQ(step.after.sent_bytes, again.sent_bytes) << step.choices.front();
    EXPECT_EQ(step.choices.size(), step.merge_reasons.size() + 1);
    seconds += step.delta_seconds();
    peak += step.delta_peak_bytes();
    sent += step.delta_sent_bytes();
    previous = step.after;
  }
  EXPECT_NEAR(seconds, walk.pick.seconds - walk.user.seconds, 1e-12 * walk.user.seconds);
  EXPECT_EQ(peak, walk.pick.peak_bytes - walk.user.peak_bytes);
  EXPECT_EQ(sent, walk.pick.sent_bytes - walk.user.sent_bytes);
}

TEST(PlanDifference, AVggGridPlanWalksToThePickOnFourDevices) {
  const PlannerRequest request = testing::zoo_request("vgg11-cifar10", 4, 128, "dgx-a100-80g");
  const plans::Plan user = plans::load_plan_file(std::filesystem::path(SPLITBRAIN_SOURCE_DIR) /
                                                 "plans/examples/vgg11-cifar10-gholami-grid-4.json");
  const PlannerResult result = plan_training(request);
  const plans::Plan& pick = best_that_fits(result);
  for (const PricedPlan& p : result.plans) {
    if (&p.plan == &pick) expect_walk_adds_up(request, user, p);
  }
}

TEST(PlanDifference, ATinyGptDataParallelPlanWalksToThePickOnEightDevices) {
  const PlannerRequest request =
      testing::zoo_request("gpt:layers=4,hidden=128,heads=4,seq=64,vocab=256", 8, 64, "dgx-a100-80g");
  plans::Plan user = data_parallel_plan(request).value();
  user.zero_stage = 1;
  user.recompute_activations = true;
  user.gradient_bucket_bytes = 1'000'000;
  const PlannerResult result = plan_training(request);
  const plans::Plan& pick = best_that_fits(result);
  for (const PricedPlan& p : result.plans) {
    if (&p.plan == &pick) expect_walk_adds_up(request, user, p);
  }
}

// From a two-stage pipeline to data parallelism: the mesh without a pipe axis cannot keep the
// stages, so the mesh and the stage cut are one step, and that step says why.
TEST(PlanDifference, MergesAChoiceWhosePlanIsNotValidWithTheNext) {
  const PlannerRequest request = testing::zoo_request("vgg11-cifar10", 4, 128, "dgx-a100-80g");
  const plans::Plan pick = data_parallel_plan(request).value();
  plans::Plan user = skeleton_plan(request, plans::Mesh({{"pipe", 2}, {"data", 2}}));
  user.pipe_axis = 0;
  for (plans::LayerSharding& layer : user.layers) layer.batch = {1};
  const int layers = request.model->size();
  user.stage_of_layer.assign(static_cast<size_t>(layers), 0);
  for (int v = layers / 2; v < layers; ++v) user.stage_of_layer[static_cast<size_t>(v)] = 1;
  user.micro_batches = 4;

  const PlanDifference walk = plan_difference(request, user, pick);
  ASSERT_GE(walk.steps.size(), 2u);
  const ChoiceStep& first = walk.steps.front();
  ASSERT_EQ(first.choices.size(), 2u);
  EXPECT_EQ(first.choices[0], "mesh and layer shardings");
  EXPECT_EQ(first.choices[1], "pipeline stages");
  ASSERT_EQ(first.merge_reasons.size(), 1u);
  EXPECT_FALSE(first.merge_reasons[0].empty());
  EXPECT_EQ(first.user_values[1],
            "2 stages: " + std::to_string(layers / 2) + "+" + std::to_string(layers - layers / 2) + " layers");
  EXPECT_EQ(walk.steps[1].choices, std::vector<std::string>{"micro-batches"});
  EXPECT_EQ(walk.steps.back().plan_after.family, pick.family);
  double seconds = 0.0;
  for (const ChoiceStep& step : walk.steps) seconds += step.delta_seconds();
  EXPECT_NEAR(seconds, walk.pick.seconds - walk.user.seconds, 1e-12 * walk.user.seconds);
}

TEST(PlanDifference, TheSamePlanHasNoSteps) {
  const PlannerRequest request = testing::zoo_request("vgg11-cifar10", 4, 128, "dgx-a100-80g");
  const plans::Plan plan = data_parallel_plan(request).value();
  const PlanDifference walk = plan_difference(request, plan, plan);
  EXPECT_TRUE(walk.steps.empty());
  EXPECT_EQ(walk.plans_priced, 1);
  EXPECT_EQ(walk.user.seconds, walk.pick.seconds);
}

TEST(PlanDifference, RefusesAPlanOfAnotherJob) {
  const PlannerRequest request = testing::zoo_request("vgg11-cifar10", 4, 128, "dgx-a100-80g");
  const plans::Plan pick = data_parallel_plan(request).value();
  plans::Plan other_batch = pick;
  other_batch.global_batch = 64;
  EXPECT_THROW(plan_difference(request, other_batch, pick), plans::PlanError);
}

}  // namespace
}  // namespace splitbrain::sim
