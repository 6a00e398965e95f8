// steady_pipeline_iteration_seconds against the full timeline: on every pipeline family and
// variant of a CNN and of a GPT (tied and untied), with many more micro-batches than stages, and
// on GPT stages that differ; and
// steady_pipeline_seconds_if_fits's fit against the full simulation's peak.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plans/compiled_plan.h"
#include "sim/cluster_presets.h"
#include "sim/simulation.h"
#include "sim/steady_pipeline.h"
#include "sim/search/searched_plans.h"
#include "plans/sequence_parallel.h"
#include "tests/sim/planner_requests.h"
#include "tests/sim/plan_variants.h"

namespace splitbrain::sim {
namespace {

TEST(SteadyPipeline, ShortTimelinesGiveTheLongOnesTime) {
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

// A long pipeline's whole prediction grown from its steady-state cut equals the full simulation's:
// the step time up to rounding, the phases adding up to it, every rank's peak and bytes sent to the
// byte, and as many runs of every collective.
TEST(SteadyPipeline, GrownPredictionMatchesTheFullSimulation) {
  const std::string gpt = "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  int grown = 0;
  for (const std::string& model : {std::string("fashion-vgg"), gpt}) {
    for (plans::Plan plan : testing::plans_with_variants(model, 4, 128)) {  // 2 samples a micro-batch
      const int stages = plan.stage_count();
      if (stages < 2 || plan.schedule == plans::PipelineSchedule::gpipe) continue;
      plan.micro_batches = 64;
      const plans::CompiledPlan compiled = plans::compile_plan(plan);
      const Prediction full = simulate(plan, compiled, cluster);
      const Prediction steady = steady_pipeline_prediction(plan, compiled, cluster);
      const std::string what = fmt::format("{} {}", plan.family, plan.mesh.to_string());
      EXPECT_NEAR(steady.iteration_seconds, full.iteration_seconds, 1e-9 * full.iteration_seconds) << what;
      const PhaseSeconds& p = steady.phases;
      EXPECT_NEAR(p.compute_forward + p.compute_backward + p.comm_exposed + p.bubble + p.optimizer,
                  steady.iteration_seconds, 1e-6 * steady.iteration_seconds)
          << what;
      EXPECT_EQ(peak_memory_bytes(steady), peak_memory_bytes(full)) << what;
      ASSERT_EQ(steady.ranks.size(), full.ranks.size()) << what;
      for (size_t r = 0; r < full.ranks.size(); ++r) {
        EXPECT_EQ(steady.ranks[r].comm_bytes_sent, full.ranks[r].comm_bytes_sent) << what << " rank " << r;
        EXPECT_EQ(steady.ranks[r].comm_bytes_sent_per_level, full.ranks[r].comm_bytes_sent_per_level) << what;
      }
      int64_t steady_runs = 0;
      int64_t full_runs = 0;
      for (const CollectiveUse& u : steady.collectives) steady_runs += u.count;
      for (const CollectiveUse& u : full.collectives) full_runs += u.count;
      EXPECT_EQ(steady_runs, full_runs) << what;
      if (steady.passes.size() < full.passes.size()) ++grown;  // drawn from a cut, not run in full
    }
  }
  EXPECT_GT(grown, 5);
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

// Stages that differ (the last holds a head over a large vocabulary): the slope past the warm-up
// is below the steady one, which the doublings find.
TEST(SteadyPipeline, UnequalStagesSettleLater) {
  PlannerRequest request = testing::large_model_request(
      "gpt:layers=8,hidden=512,heads=8,seq=512,vocab=40000,positions=512,attn_dropout=10", 16, 512);
  SearchStats stats;
  int settled_later = 0;
  for (const SearchMesh& mesh : {make_search_mesh(4, 1, 1, 4), make_search_mesh(8, 1, 1, 2)}) {
    const int stages = mesh.size_of(mesh.pipe);
    std::optional<plans::Plan> plan = searched_plan(request, mesh, 32 * stages, nullptr, stats);
    ASSERT_TRUE(plan);
    std::vector<plans::Plan> forms = {*plan};
    if (std::optional<plans::Plan> twin = plans::with_sequence_parallelism(*plan)) forms.push_back(*twin);
    for (const plans::Plan& form : forms) {
      const plans::CompiledPlan compiled = plans::compile_plan(form);
      const double full = simulate(form, compiled, request.cluster).iteration_seconds;
      const double steady = steady_pipeline_iteration_seconds(form, compiled, request.cluster);
      EXPECT_NEAR(steady, full, 1e-9 * full) << form.family << " " << form.mesh.to_string();
      // The line through the two counts past the warm-up alone.
      auto cut = [&](int micro_batches) {
        plans::Plan shorter = form;
        shorter.micro_batches = micro_batches;
        shorter.global_batch = form.micro_batch_size() * micro_batches;
        return simulate(shorter, compiled, request.cluster).iteration_seconds;
      };
      const double past_warm_up =
          cut(stages + 2) + (form.micro_batches - stages - 2) * (cut(stages + 2) - cut(stages + 1));
      if (std::abs(past_warm_up - full) > 1e-6 * full) ++settled_later;
    }
  }
  EXPECT_GT(settled_later, 0) << "no case where the slope past the warm-up is not the steady one";
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
