// The planner's pruned search (memory walks decide which variants fit; only plans whose lower
// bound on the step time could beat the best so far are timed) ranks exactly what the exhaustive
// search ranks, which times every candidate and variant in full.

#include <gtest/gtest.h>

#include "model/zoo.h"
#include "sim/cluster_presets.h"
#include "sim/search/planner.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim {
namespace {

PlannerRequest gpt_request(const std::string& model_spec, int devices, int64_t batch, int64_t memory_limit_bytes) {
  PlannerRequest request = testing::large_model_request(model_spec, devices, batch);
  request.memory_limit_bytes = memory_limit_bytes;
  return request;
}

// Every ranked plan the same, in the same order, to the bit.
void expect_same_plans(const PlannerResult& pruned, const PlannerResult& exhaustive) {
  ASSERT_EQ(pruned.plans.size(), exhaustive.plans.size());
  for (size_t i = 0; i < pruned.plans.size(); ++i) {
    const PricedPlan& a = pruned.plans[i];
    const PricedPlan& b = exhaustive.plans[i];
    SCOPED_TRACE("rank " + std::to_string(i + 1) + ": " + b.plan.family);
    EXPECT_EQ(a.plan.family, b.plan.family);
    EXPECT_EQ(a.plan.mesh, b.plan.mesh);
    EXPECT_EQ(a.plan.layers, b.plan.layers);
    EXPECT_EQ(a.plan.stage_of_layer, b.plan.stage_of_layer);
    EXPECT_EQ(a.plan.micro_batches, b.plan.micro_batches);
    EXPECT_EQ(a.plan.zero_stage, b.plan.zero_stage);
    EXPECT_EQ(a.plan.recompute_activations, b.plan.recompute_activations);
    EXPECT_EQ(a.plan.recompute_attention, b.plan.recompute_attention);
    EXPECT_EQ(a.plan.schedule, b.plan.schedule);
    EXPECT_EQ(a.plan.virtual_stages, b.plan.virtual_stages);
    EXPECT_EQ(a.plan.regather_saved_inputs, b.plan.regather_saved_inputs);
    EXPECT_EQ(a.feasible, b.feasible);
    EXPECT_EQ(a.prediction.iteration_seconds, b.prediction.iteration_seconds);  // exactly: the same simulation
    EXPECT_EQ(peak_memory_bytes(a.prediction), peak_memory_bytes(b.prediction));
    EXPECT_EQ(a.prediction.phases.bubble, b.prediction.phases.bubble);
  }
  EXPECT_EQ(pruned.single_device_seconds, exhaustive.single_device_seconds);
  EXPECT_EQ(pruned.data_parallel_peak_bytes, exhaustive.data_parallel_peak_bytes);
}

// Both searches on one request rank the same plans.
void expect_same_ranking(PlannerRequest request) {
  request.exhaustive = true;
  const PlannerResult exhaustive = plan_training(request);
  request.exhaustive = false;
  const PlannerResult pruned = plan_training(request);
  expect_same_plans(pruned, exhaustive);
  // The pruning did prune: otherwise this test would compare the exhaustive search with itself.
  EXPECT_LT(pruned.stats.plans_simulated, exhaustive.stats.plans_simulated);
}

constexpr int64_t kMB = 1'000'000;
const std::string kGpt = "gpt:layers=4,hidden=512,heads=8,seq=256,vocab=4000,positions=256";

TEST(PlannerPruning, SameRankingWhenMostPlansFit) { expect_same_ranking(gpt_request(kGpt, 16, 64, 80'000 * kMB)); }

TEST(PlannerPruning, SameRankingWhenZeroAndRecomputeDecide) {
  expect_same_ranking(gpt_request(kGpt, 16, 64, 180 * kMB));
}

TEST(PlannerPruning, SameRankingWhenNothingFits) {
  // Every plan over the limit: the search keeps the fastest that does not fit.
  expect_same_ranking(gpt_request(kGpt, 16, 64, 10 * kMB));
}

TEST(PlannerPruning, SameRankingWhenOnlySmallMicroBatchesFit) {
  // Only pipelines of micro-batches of a few samples per replica fit.
  expect_same_ranking(
      gpt_request("gpt:layers=8,hidden=512,heads=8,seq=512,vocab=4000,positions=512", 8, 64, 100 * kMB));
}

TEST(PlannerPruning, SameRankingForAConvolutionalNetUnderALimit) {
  PlannerRequest request = testing::zoo_request("vgg11-cifar10", 16, 128, "dgx-a100-80g:nodes=2");
  request.memory_limit_bytes = 150 * kMB;
  expect_same_ranking(request);
}

// The meshes searched on several threads share the best plan so far, so what each prunes depends
// on the others' timing; the ranking must not.
TEST(PlannerPruning, SameRankingOnAnyNumberOfThreads) {
  for (PlannerRequest request :
       {gpt_request(kGpt, 16, 64, 180 * kMB), testing::zoo_request("vgg11-cifar10", 16, 128, "dgx-a100-80g:nodes=2")}) {
    request.search_threads = 1;
    const PlannerResult one_thread = plan_training(request);
    for (int threads : {2, 5}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      request.search_threads = threads;
      expect_same_plans(plan_training(request), one_thread);
    }
  }
}

}  // namespace
}  // namespace splitbrain::sim
