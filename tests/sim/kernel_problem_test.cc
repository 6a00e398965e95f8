// The kernel problem of a plan's convolution: what the executor's Conv2dOp hands its kernel.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "sim/cluster_presets.h"
#include "sim/kernel_problem.h"
#include "sim/search/families.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim {
namespace {

PlannerRequest request_for(int devices) { return testing::zoo_request("vgg11-cifar10", devices, 64, "local-cpu"); }

// The problems of every layer of `plan` of type T, in layer order.
template <class T>
std::vector<T> problems_of(const plans::Plan& plan) {
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  std::vector<T> problems;
  for (size_t i = 0; i < compiled.layers.size(); ++i) {
    const auto p =
        kernel_problem(*plan.model, static_cast<int>(i), compiled.layers[i].layouts, plan.mesh, compiled.micro_batch);
    if (p && std::holds_alternative<T>(*p)) problems.push_back(std::get<T>(*p));
  }
  return problems;
}

TEST(KernelProblem, DataParallelHalvesTheBatch) {
  const std::vector<ConvProblem> problems = problems_of<ConvProblem>(*data_parallel_plan(request_for(2)));
  ASSERT_EQ(problems.size(), 8u);
  const ConvProblem& first = problems.front();
  EXPECT_EQ(first.batch, 32);
  EXPECT_EQ(first.in_channels, 3);
  EXPECT_EQ(first.height, 32);
  EXPECT_EQ(first.out_channels, 64);
  EXPECT_EQ(first.pad_top, 1);
  EXPECT_EQ(kernel_key(first, 2), "conv2d n32 c3 h32 w32 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 bias, 2 busy");
  EXPECT_EQ(kernel_key(first, 2, CacheState::warm),
            "conv2d n32 c3 h32 w32 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 bias, 2 busy, caches warm");
}

TEST(KernelProblem, PoolingAndActivationsOnTheLocalBlock) {
  const plans::Plan plan = *data_parallel_plan(request_for(2));
  const std::vector<PoolProblem> pools = problems_of<PoolProblem>(plan);
  ASSERT_EQ(pools.size(), 5u);
  EXPECT_EQ(kernel_key(pools.front(), 2), "maxpool n32 c64 h32 w32 r2x2 s2x2 p0,0, 2 busy");
  const std::vector<ActivationProblem> activations = problems_of<ActivationProblem>(plan);
  ASSERT_FALSE(activations.empty());
  // relu1 on conv1's local output: 32 x 64 x 32 x 32.
  EXPECT_EQ(kernel_key(activations.front(), 1), "relu 2097152, 1 busy");
  // Dropout's mask hash makes it a problem of its own, with its drop probability.
  const auto dropout = std::find_if(activations.begin(), activations.end(),
                                    [](const ActivationProblem& p) { return p.kind == model::OpKind::dropout; });
  ASSERT_NE(dropout, activations.end());
  EXPECT_EQ(kernel_key(*dropout, 2), fmt::format("dropout {} p0.5, 2 busy", dropout->elements));
}

TEST(KernelProblem, AHeightSplitReadsItsBlockWithBothHalosAndPadsOnlyTheWidth) {
  const std::vector<plans::Plan> plans = domain_parallel_plans(request_for(2));
  ASSERT_FALSE(plans.empty());
  const std::vector<ConvProblem> problems = problems_of<ConvProblem>(plans.front());
  ASSERT_EQ(problems.size(), 8u);
  // conv1 on 32 rows split in two: 16 rows + 1 halo row on each side; the whole batch.
  EXPECT_EQ(problems.front().batch, 64);
  EXPECT_EQ(problems.front().height, 18);
  EXPECT_EQ(problems.front().width, 32);
  EXPECT_EQ(problems.front().pad_top, 0);
  EXPECT_EQ(problems.front().pad_bottom, 0);
  EXPECT_EQ(problems.front().pad_left, 1);
  // conv8 on a 2x2 image: one row each, three with the halos.
  EXPECT_EQ(problems.back().height, 3);
  EXPECT_EQ(kernel_key(problems.back(), 2), "conv2d n64 c512 h3 w2 k512 r3x3 s1x1 p0,0,1,1 d1x1 g1 bias, 2 busy");
}

TEST(KernelProblem, BusyRanksAreThePlansRanksOnOneNode) {
  Cluster cluster = cluster_preset("local-cpu");
  cluster.levels.front().fan_out = 2;
  EXPECT_EQ(busy_ranks_per_node(cluster, plans::Mesh({{"data", 1}})), 1);
  EXPECT_EQ(busy_ranks_per_node(cluster, plans::Mesh({{"data", 2}})), 2);
  EXPECT_EQ(busy_ranks_per_node(cluster, plans::Mesh({{"data", 2}, {"model", 4}})), 2);
}

// vgg11-cifar10's fc1 (512 -> 4096) on one rank: the whole micro-batch's rows in one product;
// split over two ranks by data, half the rows each.
TEST(KernelProblem, LinearLayersHaveTheirLocalProduct) {
  for (int devices : {1, 2}) {
    const plans::Plan plan = *data_parallel_plan(request_for(devices));
    const plans::CompiledPlan compiled = plans::compile_plan(plan);
    const int fc = plan.model->find("fc1");
    const std::optional<KernelProblem> problem =
        kernel_problem(*plan.model, fc, compiled.layers[static_cast<size_t>(fc)].layouts, plan.mesh, 64);
    ASSERT_TRUE(problem.has_value());
    EXPECT_EQ(std::get<LinearProblem>(*problem), (LinearProblem{64 / devices, 512, 4096, true}));
    EXPECT_EQ(kernel_key(*problem, devices), fmt::format("linear m{} k512 n4096 bias, {} busy", 64 / devices, devices));
  }
}

PlannerRequest gpt_request(int devices) {
  PlannerRequest request = request_for(devices);
  request.model_spec = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  request.model = std::make_shared<model::Model>(model::build_zoo_model(request.model_spec));
  request.global_batch = 16;
  return request;
}

// The attention core on the local samples, the layer norm on the local rows.
TEST(KernelProblem, AttentionAndLayerNormOnTheirLocalSamplesHeadsAndRows) {
  for (const int devices : {1, 2}) {
    const plans::Plan plan = *data_parallel_plan(gpt_request(devices));
    const std::vector<AttentionProblem> cores = problems_of<AttentionProblem>(plan);
    ASSERT_EQ(cores.size(), 2u);  // one per block
    EXPECT_EQ(cores.front(), (AttentionProblem{16 / devices, 16, 4, 16, true}));
    EXPECT_EQ(kernel_key(cores.front(), devices),
              fmt::format("attention n{} t16 heads4 d16 causal, {} busy", 16 / devices, devices));
    const std::vector<LayerNormProblem> norms = problems_of<LayerNormProblem>(plan);
    ASSERT_EQ(norms.size(), 5u);  // two per block and the last
    EXPECT_EQ(norms.front(), (LayerNormProblem{16 / devices * 16, 64}));
    EXPECT_EQ(kernel_key(norms.front(), devices),
              fmt::format("layernorm m{} k64, {} busy", 16 / devices * 16, devices));
  }
}

// Grouped-query attention and rotary positions name themselves in the key, so their calibrated
// times are their own; multi-head attention without rotation keeps the key it always had.
TEST(KernelProblem, AttentionKeyNamesKvHeadsAndRotation) {
  EXPECT_EQ(kernel_key(AttentionProblem{4, 16, 8, 64, true, 2, true}, 1),
            "attention n4 t16 heads8 d64 causal kv2 rope, 1 busy");
  EXPECT_EQ(kernel_key(AttentionProblem{4, 16, 8, 64, false, 0, true}, 1), "attention n4 t16 heads8 d64 rope, 1 busy");
  EXPECT_EQ(kernel_key(AttentionProblem{4, 16, 8, 64, true}, 1), "attention n4 t16 heads8 d64 causal, 1 busy");
  EXPECT_NE((AttentionProblem{4, 16, 8, 64, true, 2, false}), (AttentionProblem{4, 16, 8, 64, true, 4, false}));
  EXPECT_NE((AttentionProblem{4, 16, 8, 64, true, 2, false}), (AttentionProblem{4, 16, 8, 64, true, 2, true}));
  AttentionProblem fused{4, 16, 8, 64, true, 2, true};
  fused.fused = true;
  EXPECT_EQ(kernel_key(fused, 1), "attention n4 t16 heads8 d64 causal kv2 rope fused, 1 busy");
  // A context-parallel rank's block of 4 queries against the 16 keys.
  AttentionProblem share{4, 16, 8, 64, true, 2, true};
  share.queries = 4;
  EXPECT_EQ(kernel_key(share, 1), "attention n4 t16 heads8 d64 causal kv2 rope queries4, 1 busy");
}

// The loss over every local position's logits: the vocabulary is its classes.
TEST(KernelProblem, LossOnTheLocalPositionsOverTheVocabulary) {
  for (const int devices : {1, 2}) {
    const plans::Plan plan = *data_parallel_plan(gpt_request(devices));
    const std::vector<LossProblem> losses = problems_of<LossProblem>(plan);
    ASSERT_EQ(losses.size(), 1u);
    EXPECT_EQ(losses.front(), (LossProblem{16 / devices * 16, 96}));
    EXPECT_EQ(kernel_key(losses.front(), devices),
              fmt::format("softmax_cross_entropy m{} k96, {} busy", 16 / devices * 16, devices));
  }
}

// The work a kernel scales with, per kind, and a problem resized in it and nothing else.
TEST(KernelProblem, WorkItemsAreSamplesValuesOrRows) {
  ConvProblem conv;
  conv.batch = 8;
  conv.in_channels = 64;
  PoolProblem pool;
  pool.batch = 4;
  const ActivationProblem relu{model::OpKind::relu, 4096, 0.0};
  const LinearProblem linear{64, 512, 4096, true};
  const AttentionProblem attention{4, 16, 4, 16, true};
  const LayerNormProblem norm{64, 128};
  const LossProblem loss{256, 96};
  EXPECT_EQ(work_items(loss), 256);
  EXPECT_EQ(work_items(attention), 4);
  EXPECT_EQ(work_items(norm), 64);
  EXPECT_EQ(work_items(conv), 8);
  EXPECT_EQ(work_items(pool), 4);
  EXPECT_EQ(work_items(relu), 4096);
  EXPECT_EQ(work_items(linear), 64);
  for (const KernelProblem& problem :
       {KernelProblem{conv}, KernelProblem{pool}, KernelProblem{relu}, KernelProblem{linear}, KernelProblem{attention},
        KernelProblem{norm}, KernelProblem{loss}}) {
    const KernelProblem twice = with_work_items(problem, 2 * work_items(problem));
    EXPECT_EQ(work_items(twice), 2 * work_items(problem));
    EXPECT_EQ(with_work_items(twice, work_items(problem)), problem);  // all else kept
  }
  EXPECT_EQ(std::get<ConvProblem>(with_work_items(conv, 16)).in_channels, 64);
}

}  // namespace
}  // namespace splitbrain::sim
