// steady_pipeline_iteration_seconds against the full timeline: on every pipeline family and
// variant of a CNN and of a GPT (tied and untied), with many more micro-batches than stages; and
// steady_pipeline_seconds_if_fits's fit against the full simulation's peak.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "plans/compiled_plan.h"
#include "sim/cluster_presets.h"
#include "sim/simulation.h"
#include "sim/steady_pipeline.h"
#include "tests/sim/plan_variants.h"

namespace splitbrain::sim {
namespace {

TEST(SteadyPipeline, TwoShortTimelinesGiveTheLongOnesTime) {
  const std::string gpt = "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  int compared = 0;
  for (const std::string& model : {std::string("fashion-vgg"), gpt, gpt + ",untied=1"}) {
    for (plans::Plan plan : testing::plans_with_variants(model, 4, 64)) {
      const int stages = plan.stage_count();
      if (stages < 2 || plan.schedule == plans::PipelineSchedule::gpipe) continue;
      for (bool selective : {false, true}) {
        plan.recompute_attention = selective;
        for (int micro_batches : {8 * stages, 16 * stages}) {
          if (plan.global_batch % micro_batches != 0) continue;
          plan.micro_batches = micro_batches;
          const plans::CompiledPlan compiled = plans::compile_plan(plan);
          const double full = simulate(plan, compiled, cluster).iteration_seconds;
          const double steady = steady_pipeline_iteration_seconds(plan, compiled, cluster);
          EXPECT_NEAR(steady, full, 1e-9 * full)
              << fmt::format("{} {} M={} sel={}", plan.family, plan.mesh.to_string(), micro_batches, selective);
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 20);
}

// The fit is decided by the full simulation's peak, to the byte: a limit one byte under it gets
// nullopt, the peak itself the step time.
TEST(SteadyPipeline, FitsExactlyWhenTheSimulatedPeakIsWithinTheLimit) {
  const std::string gpt = "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  int compared = 0;
  for (const std::string& model : {std::string("fashion-vgg"), gpt + ",untied=1"}) {
    for (plans::Plan plan : testing::plans_with_variants(model, 4, 64)) {
      const int stages = plan.stage_count();
      for (int micro_batches : {stages, 8 * stages}) {
        if (stages > 1 && plan.global_batch % micro_batches != 0) continue;
        if (stages > 1) plan.micro_batches = micro_batches;
        const plans::CompiledPlan compiled = plans::compile_plan(plan);
        const Prediction full = simulate(plan, compiled, cluster);
        const int64_t peak = peak_memory_bytes(full);
        const std::string what = fmt::format("{} {} M={}", plan.family, plan.mesh.to_string(), plan.micro_batches);
        EXPECT_FALSE(steady_pipeline_seconds_if_fits(plan, compiled, cluster, peak - 1)) << what;
        const std::optional<double> seconds = steady_pipeline_seconds_if_fits(plan, compiled, cluster, peak);
        ASSERT_TRUE(seconds) << what;
        EXPECT_NEAR(*seconds, full.iteration_seconds, 1e-9 * full.iteration_seconds) << what;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 20);
}

TEST(SteadyPipeline, ShortPipelinesAndGPipeGetTheFullTimeline) {
  plans::Plan plan = testing::plans_with_variants("fashion-vgg", 2, 32).front();
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  EXPECT_EQ(steady_pipeline_iteration_seconds(plan, compiled, cluster),
            simulate(plan, compiled, cluster).iteration_seconds);
}

}  // namespace
}  // namespace splitbrain::sim
