// The step program on every family the planner emits, with ZeRO 1-3, recompute and GPipe
// variants: each rank's program is well formed, and the simulator reports its memory walk.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "model/zoo.h"
#include "plans/memory_walk.h"
#include "plans/step_compiler.h"
#include "sim/cluster_presets.h"
#include "sim/memory_model.h"
#include "sim/search/planner.h"
#include "sim/simulation.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::sim {
namespace {

std::vector<plans::Plan> plans_with_variants(const std::string& model_spec, int devices, int64_t batch) {
  PlannerRequest request;
  request.model = std::make_shared<model::Model>(model::build_zoo_model(model_spec));
  request.model_spec = model_spec;
  request.devices = devices;
  request.global_batch = batch;
  request.cluster = cluster_preset("dgx-a100-80g");
  std::vector<plans::Plan> out;
  for (const PricedPlan& p : plan_training(request).plans) {
    out.push_back(p.plan);
    if (p.plan.zero_stage != 0 || p.plan.recompute_activations) continue;
    for (int zero = 1; zero <= 3; ++zero) {
      plans::Plan variant = p.plan;
      variant.zero_stage = zero;
      variant.family += fmt::format(" +zero{}", zero);
      out.push_back(variant);
    }
    plans::Plan recompute = p.plan;
    recompute.recompute_activations = true;
    recompute.family += " +recompute";
    out.push_back(recompute);
    if (p.plan.pipe_axis >= 0) {
      plans::Plan gpipe = p.plan;
      gpipe.schedule = plans::PipelineSchedule::gpipe;
      gpipe.family += " +gpipe";
      out.push_back(gpipe);
    }
  }
  return out;
}

TEST(StepProgramMemory, EveryFamilysProgramIsWellFormedOnEveryRank) {
  for (int devices : {1, 2, 4}) {
    for (const plans::Plan& plan : plans_with_variants("fashion-vgg", devices, 32)) {
      const plans::CompiledPlan compiled = plans::compile_plan(plan);
      for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
        const plans::StepProgram program = plans::compile_step(plan, compiled, rank);
        for (const std::string& problem : plans::testing::step_program_problems(plan, compiled, program)) {
          ADD_FAILURE() << plan.family << " " << plan.mesh.to_string() << " rank " << rank << ": " << problem;
        }
      }
    }
  }
}

// The simulator's memory per stage is the walk of the stage's program, category by category.
TEST(StepProgramMemory, TheSimulatorsMemoryIsTheWalk) {
  for (int devices : {2, 4}) {
    for (const plans::Plan& plan : plans_with_variants("fashion-vgg", devices, 32)) {
      const plans::CompiledPlan compiled = plans::compile_plan(plan);
      const Prediction prediction = simulate(plan, compiled, cluster_preset("dgx-a100-80g"));
      for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
        const plans::MemoryPeaks walk = plans::walk_memory(plans::compile_step(plan, compiled, rank));
        const MemoryBreakdown& predicted = prediction.ranks.at(static_cast<size_t>(rank)).memory;
        using plans::MemoryCategory;
        const std::string name = fmt::format("{} {} rank {}", plan.family, plan.mesh.to_string(), rank);
        EXPECT_EQ(predicted.params, walk.of(MemoryCategory::params)) << name;
        EXPECT_EQ(predicted.grads, walk.of(MemoryCategory::grads)) << name;
        EXPECT_EQ(predicted.optimizer, walk.of(MemoryCategory::optimizer)) << name;
        EXPECT_EQ(predicted.activations, walk.of(MemoryCategory::activations)) << name;
        EXPECT_EQ(predicted.buffers, walk.of(MemoryCategory::buffers)) << name;
        EXPECT_EQ(predicted.total(), walk.total) << name;
      }
    }
  }
}

}  // namespace
}  // namespace splitbrain::sim
