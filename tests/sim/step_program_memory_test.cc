// The step program on every family the planner emits, with ZeRO 1-3, recompute, GPipe and
// interleaved variants: each rank's program is well formed, the simulator reports its memory walk,
// and every pipeline's hand-overs complete in NCCL's groups.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "model/zoo.h"
#include "plans/hand_over_groups.h"
#include "plans/memory_walk.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/cluster_presets.h"
#include "sim/memory_model.h"
#include "sim/search/planner.h"
#include "sim/simulation.h"
#include "tests/plans/step_program_properties.h"
#include "tests/sim/plan_variants.h"

namespace splitbrain::sim {
namespace {

using testing::plans_with_variants;

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

// plan_fits_memory walks a pipeline cut to memory_equivalent_micro_batches: on every stage of
// every family and variant (selective recompute too), with many more micro-batches than stages,
// the walk of the cut plan peaks exactly where the whole plan's does.
TEST(StepProgramMemory, FewerMicroBatchesReachTheSamePeaks) {
  const std::string gpt = "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  int compared = 0;
  for (const std::string& model : {std::string("fashion-vgg"), gpt, gpt + ",untied=1"}) {
    for (plans::Plan plan : plans_with_variants(model, 4, 64)) {
      const int stages = plan.stage_count();
      if (stages < 2) continue;
      for (bool selective : {false, true}) {
        plan.recompute_attention = selective;
        for (int micro_batches : {4 * stages, 8 * stages, 16 * stages}) {
          if (plan.global_batch % micro_batches != 0) continue;
          plans::Plan whole = plan;
          whole.micro_batches = micro_batches;
          plans::Plan cut = whole;
          cut.micro_batches = memory_equivalent_micro_batches(whole);
          if (cut.micro_batches == whole.micro_batches) continue;
          cut.global_batch = whole.micro_batch_size() * cut.micro_batches;
          const plans::CompiledPlan compiled = plans::compile_plan(whole);
          for (int stage = 0; stage < stages; ++stage) {
            const MemoryBreakdown a = stage_memory(whole, compiled, stage);
            const MemoryBreakdown b = stage_memory(cut, compiled, stage);
            const std::string name =
                fmt::format("{} {} M={} stage {}", whole.family, whole.mesh.to_string(), micro_batches, stage);
            EXPECT_EQ(a.activations, b.activations) << name;
            EXPECT_EQ(a.buffers, b.buffers) << name;
            EXPECT_EQ(a.total(), b.total()) << name;
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 50);
}

// stage_fits_memory stops the walk at the first byte over the limit: it answers as the whole
// walk's peak does, at the peak, a byte below it and well below (where it stops early), on every
// stage of every family and variant.
TEST(StepProgramMemory, AWalkStoppedAtTheLimitAnswersAsTheWholeWalk) {
  const std::string gpt = "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  int compared = 0;
  for (const std::string& model : {std::string("fashion-vgg"), gpt}) {
    for (const plans::Plan& plan : plans_with_variants(model, 4, 64)) {
      const plans::CompiledPlan compiled = plans::compile_plan(plan);
      for (int stage = 0; stage < plan.stage_count(); ++stage) {
        const int64_t peak = stage_memory(plan, compiled, stage).total();
        for (const int64_t limit : {peak, peak - 1, peak / 2, int64_t{0}}) {
          EXPECT_EQ(stage_fits_memory(plan, compiled, stage, limit), peak <= limit)
              << plan.family << " " << plan.mesh.to_string() << " stage " << stage << " limit " << limit;
          ++compared;
        }
      }
      const int64_t highest = [&] {
        int64_t most = 0;
        for (int s = 0; s < plan.stage_count(); ++s) most = std::max(most, stage_memory(plan, compiled, s).total());
        return most;
      }();
      EXPECT_TRUE(plan_fits_memory(plan, compiled, highest)) << plan.family;
      EXPECT_FALSE(plan_fits_memory(plan, compiled, highest - 1)) << plan.family;
    }
  }
  EXPECT_GT(compared, 100);
}

// The interleaved variants above exist (the planner's pipelines on 2 and 4 devices have them), so
// the two tests before check them too.
TEST(StepProgramMemory, InterleavedVariantsAreChecked) {
  for (int devices : {2, 4}) {
    int interleaved = 0;
    for (const plans::Plan& plan : plans_with_variants("fashion-vgg", devices, 32)) {
      interleaved += plan.schedule == plans::PipelineSchedule::interleaved_one_f_one_b ? 1 : 0;
    }
    EXPECT_GE(interleaved, 3) << devices << " devices";
  }
}

// Models like those of the equivalence suites (a VGG, a tiny GPT tied and untied, a residual
// network with batch normalisation): every pipeline of theirs, interleaved ones too, hands over in
// the groups of a rendezvous transport (plans/hand_over_groups.h), as the scrambled device runs them.
TEST(StepProgramMemory, EveryPipelineHandsOverInNcclGroups) {
  const std::string gpt = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16";
  for (const std::string& model : {std::string("fashion-vgg"), gpt, gpt + ",untied=1", std::string("resnet18")}) {
    for (int devices : {2, 4}) {
      int pipelines = 0;
      for (const plans::Plan& plan : plans_with_variants(model, devices, 8)) {
        if (plan.stage_count() < 2) continue;
        ++pipelines;
        const auto stall = plans::stall_of_plan_hand_overs(plan, plans::compile_plan(plan));
        EXPECT_FALSE(stall.has_value()) << model << " " << plan.family << " " << plan.mesh.to_string() << ": "
                                        << (stall ? stall->message : "");
      }
      EXPECT_GT(pipelines, 0) << model << " on " << devices << " devices";
    }
  }
}

// Interleaved 1F1B on 4 stages x 2 chunks, 8 micro-batches: each rank's predicted memory is the
// walk of its step program, whose passes run both of its chunks in the schedule's order.
TEST(StepProgramMemory, InterleavedMemoryPerRankIsTheWalk) {
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", 4}}), 32,
                                       [](const model::Layer&) { return plans::LayerSharding{}; });
  plan.pipe_axis = 0;
  plan.micro_batches = 8;
  plan.schedule = plans::PipelineSchedule::interleaved_one_f_one_b;
  plan.virtual_stages = 2;
  plan.stage_of_layer = plans::even_chunks(*plan.model, 8).value();
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Prediction prediction = simulate(plan, compiled, cluster_preset("dgx-a100-80g"));
  ASSERT_EQ(prediction.ranks.size(), 4u);
  for (int rank = 0; rank < 4; ++rank) {
    const plans::MemoryPeaks walk = plans::walk_memory(plans::compile_step(plan, compiled, rank));
    const MemoryBreakdown& predicted = prediction.ranks[static_cast<size_t>(rank)].memory;
    EXPECT_EQ(predicted.params, walk.of(plans::MemoryCategory::params)) << rank;
    EXPECT_EQ(predicted.activations, walk.of(plans::MemoryCategory::activations)) << rank;
    EXPECT_EQ(predicted.buffers, walk.of(plans::MemoryCategory::buffers)) << rank;
    EXPECT_EQ(predicted.total(), walk.total) << rank;
    // A rank holds the parameters of both of its chunks: those of chunks rank and rank + 4.
    int64_t parameters = 0;
    for (int v = 0; v < plan.model->size(); ++v) {
      if (compiled.layers[static_cast<size_t>(v)].stage != rank) continue;
      for (const plans::ParameterShard& shard : compiled.layers[static_cast<size_t>(v)].layouts.parameters) {
        parameters += shard.local_elements * 4;
      }
    }
    EXPECT_EQ(predicted.params, parameters) << rank;
  }
}

}  // namespace
}  // namespace splitbrain::sim
