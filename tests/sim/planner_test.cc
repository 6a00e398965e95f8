// The planner: every family is scored, memory limits are honoured, bad requests are refused.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "model/errors.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "sim/cluster_presets.h"
#include "sim/simulation.h"
#include "sim/search/planner.h"
#include "sim/search/searched_plans.h"
#include "sim/search/stage_partition.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim {
namespace {

PlannerRequest request_for(const std::string& model_spec, int devices, int64_t batch, const std::string& cluster) {
  return testing::zoo_request(model_spec, devices, batch, cluster);
}

bool has_family(const PlannerResult& result, const std::string& prefix) {
  for (const PricedPlan& p : result.plans) {
    if (p.plan.family.find(prefix) != std::string::npos) return true;
  }
  return false;
}

TEST(Planner, ScoresEveryFamily) {
  const PlannerResult result = plan_training(request_for("vgg11-cifar10", 8, 256, "dgx-a100-80g"));
  for (const char* family : {"data-parallel", "model-parallel", "splitbrain g=2", "splitbrain g=8", "gholami-grid 2x4",
                             "domain-parallel s=2", "pipeline 2 stages", "soybean m=", "best"}) {
    EXPECT_TRUE(has_family(result, family)) << family;
  }
  EXPECT_GT(result.single_device_seconds, 0.0);
  EXPECT_GT(result.data_parallel_peak_bytes, 0);
  // Fitting plans first, each group fastest first.
  for (size_t i = 1; i < result.plans.size(); ++i) {
    const PricedPlan& a = result.plans[i - 1];
    const PricedPlan& b = result.plans[i];
    if (a.feasible == b.feasible) {
      EXPECT_LE(a.prediction.iteration_seconds, b.prediction.iteration_seconds);
    } else {
      EXPECT_TRUE(a.feasible);
    }
  }
}

TEST(Planner, BestIsAtLeastAsFastAsEveryFittingFamily) {
  const PlannerResult result = plan_training(request_for("fashion-vgg", 4, 128, "v100-pcie-10gbe"));
  double best = 0.0;
  for (const PricedPlan& p : result.plans) {
    if (p.plan.family.find("best") != std::string::npos) best = p.prediction.iteration_seconds;
  }
  ASSERT_GT(best, 0.0);
  EXPECT_LE(result.plans.front().prediction.iteration_seconds, best);
}

TEST(Planner, MemoryLimitDecidesFeasibility) {
  PlannerRequest request = request_for("vgg16-cifar10", 8, 256, "dgx-a100-80g");
  request.memory_limit_bytes = 150'000'000;  // below data parallelism's need, above the sharded plans'
  const PlannerResult result = plan_training(request);
  int fitting = 0;
  int over = 0;
  for (const PricedPlan& p : result.plans) {
    const int64_t peak = peak_memory_bytes(p.prediction);
    EXPECT_EQ(p.feasible, peak <= request.memory_limit_bytes) << p.plan.family;
    (p.feasible ? fitting : over)++;
  }
  EXPECT_GT(fitting, 0);
  EXPECT_GT(over, 0);
  EXPECT_TRUE(result.plans.front().feasible);
}

// A pipeline whose cuts fit only once activations are recomputed and the model states sharded
// is still cut and priced, not dropped as infeasible before those are tried.
TEST(Planner, TriesRecomputationAndZeroBeforeCallingAPipelineInfeasible) {
  PlannerRequest request = request_for("gpt:layers=8,hidden=256,heads=4,seq=256,vocab=1024", 8, 64, "dgx-a100-80g");
  const PlannerResult unlimited = plan_training(request);
  const PricedPlan* pipeline = nullptr;
  for (const PricedPlan& p : unlimited.plans) {
    // Its label may carry the ZeRO stage it is fastest with.
    if (p.plan.family.starts_with("pipeline 2 stages")) pipeline = &p;
  }
  ASSERT_NE(pipeline, nullptr);
  plans::Plan lean = pipeline->plan;
  lean.zero_stage = 3;
  lean.recompute_activations = true;
  const int64_t lean_peak = peak_memory_bytes(simulate(lean, plans::compile_plan(lean), request.cluster));
  ASSERT_LT(lean_peak, peak_memory_bytes(pipeline->prediction));
  request.memory_limit_bytes = lean_peak + lean_peak / 20;
  const PlannerResult limited = plan_training(request);
  bool fits = false;
  for (const PricedPlan& p : limited.plans)
    fits = fits || (p.plan.family.starts_with("pipeline 2 stages +") && p.feasible);
  EXPECT_TRUE(fits) << "the 2-stage pipeline with recomputation and ZeRO fits in " << request.memory_limit_bytes
                    << " B";
}

// Stages start only between blocks: in GPT at a block's first layer norm or the final one.
TEST(Planner, PipelineStagesStartBetweenTransformerBlocks) {
  const PlannerResult result =
      plan_training(request_for("gpt:layers=8,hidden=128,heads=4,seq=64,vocab=256", 8, 64, "dgx-a100-80g"));
  int cuts = 0;
  for (const PricedPlan& p : result.plans) {
    if (p.plan.stage_count() < 2) continue;
    for (size_t i = 1; i < p.plan.stage_of_layer.size(); ++i) {
      if (p.plan.stage_of_layer[i] == p.plan.stage_of_layer[i - 1]) continue;
      const std::string& name = p.plan.model->layer(static_cast<int>(i)).name;
      EXPECT_TRUE(name.ends_with(".ln_1") || name == "ln_f") << p.plan.family << " starts a stage at " << name;
      ++cuts;
    }
  }
  EXPECT_GT(cuts, 0);
  // A chain may be cut anywhere.
  const model::Model chain = model::build_zoo_model("mlp:hidden=64");
  const std::vector<bool> anywhere = stage_starts_between_blocks(chain, 2);
  EXPECT_EQ(std::count(anywhere.begin() + 1, anywhere.end(), true), chain.size() - 1);
}

// Every plan found with tensor parallelism gets a sequence-parallel twin (plans/
// sequence_parallel.h), priced on its own; plans without tensor parallelism get none.
TEST(Planner, ProposesSequenceParallelismWithTensorParallelism) {
  const PlannerResult result =
      plan_training(request_for("gpt:layers=4,hidden=128,heads=4,seq=64,vocab=256", 8, 64, "dgx-a100-80g"));
  int twins = 0;
  for (const PricedPlan& p : result.plans) {
    if (p.plan.family.find("+sp") == std::string::npos) continue;
    ++twins;
    SCOPED_TRACE(p.plan.family);
    EXPECT_TRUE(p.plan.regather_saved_inputs);
    const bool splits_sequence = std::any_of(p.plan.layers.begin(), p.plan.layers.end(),
                                             [](const plans::LayerSharding& l) { return !l.spatial.empty(); });
    EXPECT_TRUE(splits_sequence);
    EXPECT_GT(p.prediction.iteration_seconds, 0.0);
  }
  EXPECT_GT(twins, 0);
  for (const PricedPlan& p : result.plans) {
    if (p.plan.family.starts_with("data-parallel")) {
      EXPECT_EQ(p.plan.family.find("+sp"), std::string::npos);
    }
  }
}

TEST(Planner, MicroBatchOptions) {
  EXPECT_EQ(micro_batch_options(512, 1), std::vector<int>({1}));
  EXPECT_EQ(micro_batch_options(512, 4), std::vector<int>({4, 8, 16, 32}));
  EXPECT_EQ(micro_batch_options(48, 4), std::vector<int>({4, 8, 16}));  // 32 does not divide 48
}

TEST(Planner, MicroBatchCountsAreEveryDivisorOfTheReplicasBatch) {
  // 3072 over 4 replicas: 768 per replica, split into 32 or more micro-batches, fewest samples first.
  EXPECT_EQ(micro_batch_counts(3072, 32, 4), std::vector<int>({768, 384, 256, 192, 128, 96, 64, 48, 32}));
  EXPECT_EQ(micro_batch_counts(48, 4, 2), std::vector<int>({24, 12, 8, 6, 4}));
  EXPECT_EQ(micro_batch_counts(100, 2, 8), std::vector<int>({}));   // 8 replicas do not divide 100
  EXPECT_EQ(micro_batch_counts(512, 1, 8), std::vector<int>({1}));  // no pipeline
  EXPECT_EQ(micro_batch_counts(16, 8, 4), std::vector<int>({}));    // 4 samples per replica, 8 stages
}

TEST(Planner, SmallMicroBatchesMakeAPipelineFit) {
  // With stages x 8 micro-batches or fewer every pipeline keeps too many samples' activations in
  // flight for 200 MB, whatever it recomputes or shards; more, smaller micro-batches fit.
  PlannerRequest request =
      request_for("gpt:layers=8,hidden=512,heads=8,seq=512,vocab=4000,positions=512", 8, 512, "dgx-a100-80g");
  request.optimizer.kind = plans::OptimizerKind::adam;
  request.memory_limit_bytes = 200'000'000;
  const PlannerResult result = plan_training(request);
  ASSERT_FALSE(result.plans.empty());
  const PricedPlan& best = result.plans.front();
  EXPECT_TRUE(best.feasible) << best.plan.family;
  ASSERT_GT(best.plan.stage_count(), 1);
  EXPECT_GT(best.plan.micro_batches, best.plan.stage_count() * 8) << best.plan.family;
}

TEST(Planner, DeviceMemoryIsAlwaysALimit) {
  PlannerRequest request = request_for("vgg16", 2, 512, "v100-pcie-10gbe");  // 16 GB V100s
  const PlannerResult result = plan_training(request);
  for (const PricedPlan& p : result.plans) {
    if (p.feasible) {
      EXPECT_LE(peak_memory_bytes(p.prediction), request.cluster.device.memory_capacity_bytes);
    }
  }
}

TEST(Planner, RefusesImpossibleRequests) {
  EXPECT_THROW(plan_training(request_for("fashion-vgg", 0, 64, "local-cpu")), InputError);
  EXPECT_THROW(plan_training(request_for("fashion-vgg", 4, 64, "local-cpu")), InputError);  // local-cpu has 2
  EXPECT_THROW(plan_training(request_for("fashion-vgg", 1'000'000, 64, "cori-knl")), InputError);
}

// fp32 main gradients under bf16 are the job's constraint: every plan ranked keeps them, and each
// needs more memory than the same plan reducing bf16 gradients (2 more bytes per parameter).
TEST(Planner, KeepsTheJobsGradientTypeInEveryPlan) {
  PlannerRequest request =
      testing::large_model_request("gpt:layers=4,hidden=512,heads=8,seq=256,vocab=4000,positions=256", 8, 32);
  request.gradient_dtype = model::DType::fp32;
  const PlannerResult result = plan_training(request);
  ASSERT_FALSE(result.plans.empty());
  for (const PricedPlan& p : result.plans) {
    ASSERT_EQ(p.plan.gradient_dtype, model::DType::fp32) << p.plan.family;
    plans::Plan bf16_gradients = p.plan;
    bf16_gradients.gradient_dtype.reset();
    const Prediction lighter = simulate(bf16_gradients, plans::compile_plan(bf16_gradients), request.cluster);
    EXPECT_GT(peak_memory_bytes(p.prediction), peak_memory_bytes(lighter)) << p.plan.family;
  }
}

TEST(Planner, OneDeviceIsPlainTraining) {
  const PlannerResult result = plan_training(request_for("mlp", 1, 64, "local-cpu"));
  ASSERT_FALSE(result.plans.empty());
  EXPECT_NEAR(result.plans.front().prediction.iteration_seconds, result.single_device_seconds, 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
