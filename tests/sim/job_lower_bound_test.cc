// The job's lower bound (sim/job_lower_bound.h): its compute term worked out by hand, the plan
// that justifies leaving communication out, and no plan any search prices below it.

#include <gtest/gtest.h>

#include <string>

#include "model/statistics.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/tied_weights.h"
#include "sim/cluster_presets.h"
#include "sim/job_lower_bound.h"
#include "sim/search/planner.h"
#include "sim/search/planner_request.h"
#include "sim/simulation.h"
#include "planner_requests.h"
#include "test_clusters.h"

namespace splitbrain::sim {
namespace {

// Every plan the searches rank, and each ranked plan under every ZeRO stage and recompute mode,
// simulated: none is faster than the job's bound.
void expect_no_plan_below_bound(const PlannerRequest& request) {
  const JobLowerBound bound =
      job_lower_bound(*request.model, request.global_batch, request.dtype, request.devices, request.cluster);
  ASSERT_GT(bound.compute_seconds, 0.0);
  const PlannerResult result = plan_training(request);
  ASSERT_FALSE(result.plans.empty());
  int checked = 0;
  for (const PricedPlan& priced : result.plans) {
    EXPECT_GE(priced.prediction.iteration_seconds, bound.seconds()) << priced.plan.family;
    for (int zero = 0; zero <= 3; ++zero) {
      for (int recompute = 0; recompute < 3; ++recompute) {
        plans::Plan variant = priced.plan;
        variant.zero_stage = zero;
        variant.recompute_activations = recompute == 1;
        variant.recompute_attention = recompute == 2;
        if (!plans::tied_weight_problem(variant).empty()) continue;  // no step can run it
        const double seconds = simulate(variant, plans::compile_plan(variant), request.cluster).iteration_seconds;
        EXPECT_GE(seconds, bound.seconds()) << variant.family << " zero " << zero << " recompute " << recompute;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(JobLowerBound, NoPlanOfATinyGptOnEightDevicesIsBelowIt) {
  expect_no_plan_below_bound(
      testing::zoo_request("gpt:layers=4,hidden=128,heads=4,seq=64,vocab=256", 8, 64, "dgx-a100-80g"));
}

TEST(JobLowerBound, NoPlanOfAVggOnFourDevicesIsBelowIt) {
  expect_no_plan_below_bound(testing::zoo_request("vgg11-cifar10", 4, 128, "dgx-a100-80g"));
}

TEST(JobLowerBound, NoPlanOfAGptOnTwoNodesIsBelowIt) {
  expect_no_plan_below_bound(
      testing::large_model_request("gpt:layers=4,hidden=512,heads=8,seq=256,vocab=4000,positions=256", 16, 64));
}

// A model without attention prices all its FLOPs at the FLOP rate: the term is the model's
// forward and backward FLOPs for the batch (inspect's totals) over devices x peak.
TEST(JobLowerBound, ComputeIsTheModelsFlopsAtPeakOverTheDevices) {
  const model::Model net = model::build_zoo_model("vgg11-cifar10");
  const Cluster cluster = testing::two_level_cluster();  // fp32 peak 10 TFLOP/s
  const model::ModelStatistics stats = model::compute_statistics(net, 128, model::DType::fp32);
  const JobLowerBound bound = job_lower_bound(net, 128, model::DType::fp32, 8, cluster);
  const double expected = (stats.forward_flops + stats.backward_flops) / (8 * 10e12);
  EXPECT_TRUE(bound.compute_counted);
  EXPECT_NEAR(bound.compute_seconds, expected, expected * 1e-12);
  EXPECT_DOUBLE_EQ(bound.seconds(), bound.compute_seconds + bound.communication_seconds);
}

// Attention's softmax and scaling are priced as memory passes, not at the FLOP rate, so the term
// counts its products only: below the model's FLOPs at peak.
TEST(JobLowerBound, AttentionCountsItsProductsOnly) {
  const model::Model net = model::build_zoo_model("gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16");
  const Cluster cluster = testing::two_level_cluster();
  const model::ModelStatistics stats = model::compute_statistics(net, 8, model::DType::fp32);
  const JobLowerBound bound = job_lower_bound(net, 8, model::DType::fp32, 2, cluster);
  EXPECT_GT(bound.compute_seconds, 0.0);
  EXPECT_LT(bound.compute_seconds, (stats.forward_flops + stats.backward_flops) / (2 * 10e12));
}

// Why the communication term is 0: a plan that replicates every layer on every rank sends
// nothing. If the step compiler ever made it send, the term could be revisited.
TEST(JobLowerBound, AReplicatedPlanSendsNothingSoNoBytesAreForced) {
  PlannerRequest request = testing::zoo_request("vgg11-cifar10", 4, 32, "dgx-a100-80g");
  plans::Plan replicated = skeleton_plan(request, plans::Mesh({{"model", 4}}));
  const Prediction prediction = simulate(replicated, plans::compile_plan(replicated), request.cluster);
  for (const RankPrediction& rank : prediction.ranks) EXPECT_EQ(rank.comm_bytes_sent, 0) << "rank " << rank.rank;
  const JobLowerBound bound =
      job_lower_bound(*request.model, request.global_batch, request.dtype, request.devices, request.cluster);
  EXPECT_EQ(bound.communication_bytes, 0);
  EXPECT_EQ(bound.communication_seconds, 0.0);
  // Each of its ranks computes the whole batch: at least 4 times the all-busy term.
  EXPECT_GE(prediction.iteration_seconds, 4 * bound.compute_seconds);
}

TEST(JobLowerBound, NamesTheSlowestLinkTheDevicesSpan) {
  const model::Model net = model::build_zoo_model("vgg11-cifar10");
  const Cluster two_nodes = cluster_preset("dgx-a100-80g:nodes=2");
  const JobLowerBound in_node = job_lower_bound(net, 64, model::DType::fp32, 8, two_nodes);
  EXPECT_EQ(in_node.link_level, "node");
  EXPECT_EQ(in_node.link_bytes_per_second, 300e9);
  const JobLowerBound across = job_lower_bound(net, 64, model::DType::fp32, 16, two_nodes);
  EXPECT_EQ(across.link_level, "cluster");
  EXPECT_EQ(across.link_bytes_per_second, 25e9);
  const JobLowerBound alone = job_lower_bound(net, 64, model::DType::fp32, 1, two_nodes);
  EXPECT_EQ(alone.link_level, "");
}

// Measured kernel seconds are bounded by no peak: the compute term is left out.
TEST(JobLowerBound, LeavesComputeOutWhereKernelsWereMeasured) {
  const model::Model net = model::build_zoo_model("vgg11-cifar10");
  Cluster cluster = testing::two_level_cluster();
  cluster.device.measured_kernels["any problem"] = {1e-3, 1e-3, 1e-3};
  const JobLowerBound bound = job_lower_bound(net, 64, model::DType::fp32, 4, cluster);
  EXPECT_FALSE(bound.compute_counted);
  EXPECT_EQ(bound.compute_seconds, 0.0);
}

}  // namespace
}  // namespace splitbrain::sim
