// A tiny GPT trained in bf16 on the CPU backend's emulation (exec/runtime/mixed_precision.h),
// under every plan the planner emits for the world size that the emulation runs (no pipeline
// stages, no ZeRO: refused by name, exit code 2 from `run`), each with bf16 gradients and with
// fp32 main gradients: the losses of every step equal the 1-rank run's (the reference file) within
// bf16's tolerance, the bytes each rank's communicator counted equal the simulator's prediction
// for the bf16 plan, and the tracked memory per category and at its peak equals the walk of the
// rank's step program (2-byte weights, activations and gradients; fp32 master copy, moments and
// buckets). The rounding is checked to be on: the same plan in fp32 ends elsewhere.
//
// Two modes (bf16_main.cc): --write-reference FILE (1 rank) writes the 1-rank run's losses;
// --reference FILE compares every plan's with them.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/comm/bf16.h"
#include "model/model_json.h"
#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/step_compiler.h"
#include "sim/cluster_presets.h"
#include "sim/search/planner.h"
#include "tests/exec/bf16/bf16_options.h"
#include "tests/exec/equivalence/plan_run.h"
#include "tests/exec/equivalence/tracked_memory.h"

namespace splitbrain::equivalence {
namespace {

constexpr const char* kModel = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";
constexpr int64_t kBatch = 8;
constexpr int kSteps = 5;
// Relative, against the 1-rank run: each partial sum of a split reduction is rounded to bf16
// (2^-9 relative) in another order than the 1-rank run's, through 5 steps; the worst seen is 4.6e-5.
constexpr double kLossTolerance = 1e-3;

sim::PlannerRequest bf16_request(int devices) {
  sim::PlannerRequest request;
  request.model = std::make_shared<model::Model>(model::resolve_model(kModel));
  request.model_spec = kModel;
  request.devices = devices;
  request.global_batch = kBatch;
  request.dtype = model::DType::bf16;
  request.cluster = sim::cluster_preset("dgx-a100-80g");
  return request;
}

// The planner's plans for `devices`, each with bf16 gradients and with fp32 main gradients.
std::vector<plans::Plan> bf16_plans(int devices) {
  std::vector<plans::Plan> out;
  for (const sim::PricedPlan& priced : sim::plan_training(bf16_request(devices)).plans) {
    plans::Plan plan = priced.plan;
    plan.gradient_dtype.reset();
    out.push_back(plan);
    plan.gradient_dtype = model::DType::fp32;
    plan.family += " + fp32 main gradients";
    out.push_back(plan);
  }
  return out;
}

// The replicated 1-rank plan with bf16 gradients.
plans::Plan one_rank_plan() { return bf16_plans(1).front(); }

std::string name_of(const plans::Plan& plan) { return plan.family + " " + plan.mesh.to_string(); }

TEST(Bf16Reference, WritesTheOneRankLosses) {
  const plans::Plan plan = one_rank_plan();
  const PlanOutcome o = run_plan(plan, sim::cluster_preset("dgx-a100-80g"), kSteps);
  ASSERT_EQ(o.status, RunStatus::ran) << o.message;
  std::ofstream(bf16_options().write_reference_path) << nlohmann::json{{"losses", o.losses}}.dump(2) << "\n";
  // The rounding is on: fp32 ends elsewhere (bf16 rounds each weight by up to 2^-9 of itself).
  plans::Plan fp32 = plan;
  fp32.dtype = model::DType::fp32;
  const PlanOutcome f = run_plan(fp32, sim::cluster_preset("dgx-a100-80g"), kSteps);
  ASSERT_EQ(f.status, RunStatus::ran) << f.message;
  EXPECT_NE(f.losses.back(), o.losses.back());
  EXPECT_NEAR(f.losses.back(), o.losses.back(), 0.05 * std::abs(f.losses.back()));
  std::printf("1 rank, %d steps: bf16 losses %.6f .. %.6f, fp32 %.6f .. %.6f\n", kSteps, o.losses.front(),
              o.losses.back(), f.losses.front(), f.losses.back());
}

TEST(Bf16, EveryPlanMatchesTheOneRankRunWithThePredictedBytesAndMemory) {
  std::vector<double> reference;
  std::ifstream in(bf16_options().reference_path);
  ASSERT_TRUE(in) << "no reference file " << bf16_options().reference_path;
  reference = nlohmann::json::parse(in).at("losses").get<std::vector<double>>();
  ASSERT_EQ(reference.size(), static_cast<size_t>(kSteps));
  const int rank = world_rank();
  int ran = 0;
  int split = 0;  // plans that split something over several ranks
  double worst = 0.0;
  for (const plans::Plan& plan : bf16_plans(world_size())) {
    const PlanOutcome o = run_plan(plan, sim::cluster_preset("dgx-a100-80g"), kSteps);
    const std::string name = name_of(plan);
    if (o.status == RunStatus::refused) {
      // Only what mixed_precision.h names as not built.
      EXPECT_TRUE(plan.zero_stage > 0 || plan.stage_count() > 1) << name << ": " << o.message;
      EXPECT_NE(o.message.find("not built"), std::string::npos) << name << ": " << o.message;
      continue;
    }
    ASSERT_EQ(o.status, RunStatus::ran) << name << ": " << o.message;
    ++ran;
    split += plan.mesh.rank_count() > 1 ? 1 : 0;
    for (int s = 0; s < kSteps; ++s) {
      const double relative = std::abs(o.losses[static_cast<size_t>(s)] - reference[static_cast<size_t>(s)]) /
                              std::abs(reference[static_cast<size_t>(s)]);
      worst = std::max(worst, relative);
      EXPECT_LE(relative, kLossTolerance) << name << " step " << s << ": " << o.losses[static_cast<size_t>(s)]
                                          << " against " << reference[static_cast<size_t>(s)];
    }
    // Bytes: what this rank's communicator counted is the simulator's prediction for the plan.
    const int64_t predicted = o.prediction.ranks.at(static_cast<size_t>(rank)).comm_bytes_sent;
    EXPECT_EQ(o.bytes.total().bytes, kSteps * predicted) << name << " rank " << rank;
    // Memory: the tracked peaks are the walk of the rank's step program, which the simulator reports.
    expect_tracked_memory_is_the_walk(o, rank, name);
    const sim::MemoryBreakdown& memory = o.prediction.ranks.at(static_cast<size_t>(rank)).memory;
    EXPECT_EQ(o.params_bytes, memory.params) << name;
    EXPECT_EQ(o.grads_bytes, memory.grads) << name;
    EXPECT_EQ(o.optimizer_bytes, memory.optimizer) << name;
    // The weights the kernels read are bf16 values (rounded from the fp32 master copy).
    for (const GlobalParameter& parameter : o.parameters) {
      int64_t not_bf16 = 0;
      for (const float w : parameter.values) not_bf16 += exec::comm::round_to_bf16(w) == w ? 0 : 1;
      EXPECT_EQ(not_bf16, 0) << name << " " << parameter.name;
    }
    if (rank == 0) {
      std::printf("%-60s losses %.6f .. %.6f  bytes/step %lld  peak %lld\n", name.c_str(), o.losses.front(),
                  o.losses.back(), static_cast<long long>(predicted), static_cast<long long>(o.peak_bytes));
    }
  }
  EXPECT_GT(ran, 0);
  if (world_size() > 1) {
    EXPECT_GT(split, 0) << "no partitioned plan ran";
  }
  if (rank == 0) std::printf("%d plans ran; worst loss difference %.2e (relative)\n", ran, worst);
}

}  // namespace
}  // namespace splitbrain::equivalence
