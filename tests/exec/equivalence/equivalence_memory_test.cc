// Memory of every run against the step program's walk, which the simulator reports: model states,
// every category and the peak per rank exactly, and what recompute saves. The runs are the shared
// suite's (equivalence_suite.h).

#include <gtest/gtest.h>
#include <mpi.h>

#include <map>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/step_compiler.h"
#include "sim/memory_model.h"
#include "tests/exec/equivalence/equivalence_suite.h"
#include "tests/exec/equivalence/tracked_memory.h"

namespace splitbrain::equivalence {
namespace {

// Parameters, gradients and optimizer state are what ZeRO shards; the simulator's memory model
// says how many bytes of each a rank keeps, and the tracked peaks must be exactly that.
TEST(Equivalence, ModelStatesPerRankEqualTheMemoryModel) {
  const int rank = world_rank();
  int zero_plans = 0;
  for (const PlanOutcome& o : suite().outcomes) {
    if (o.status != RunStatus::ran) continue;
    zero_plans += o.plan.zero_stage > 0 ? 1 : 0;
    const sim::MemoryBreakdown& predicted = o.prediction.ranks.at(static_cast<size_t>(rank)).memory;
    EXPECT_EQ(o.params_bytes, predicted.params) << plan_name(o.plan) << " rank " << rank;
    EXPECT_EQ(o.grads_bytes, predicted.grads) << plan_name(o.plan) << " rank " << rank;
    EXPECT_EQ(o.optimizer_bytes, predicted.optimizer) << plan_name(o.plan) << " rank " << rank;
    // ZeRO must really shrink what it shards (the memory model could be wrong in the same way).
    const PlanOutcome* base = base_of(o, suite().outcomes);
    if (o.plan.zero_stage == 0 || base == nullptr || base->status != RunStatus::ran) continue;
    const auto sharded = [&](int64_t bytes, int64_t whole, int from_stage) {
      return o.plan.zero_stage >= from_stage ? bytes < whole : bytes == whole;
    };
    EXPECT_TRUE(sharded(o.params_bytes, base->params_bytes, 3)) << plan_name(o.plan) << " params " << o.params_bytes;
    EXPECT_TRUE(sharded(o.grads_bytes, base->grads_bytes, 2)) << plan_name(o.plan) << " grads " << o.grads_bytes;
    EXPECT_TRUE(sharded(o.optimizer_bytes, base->optimizer_bytes, 1)) << plan_name(o.plan) << " optimizer";
  }
  if (world_size() > 1) {
    EXPECT_GT(zero_plans, 0) << "no ZeRO plan ran";
  }
}

// A pipeline cut through a DAG hands several tensors from a stage to the next (the matmul/concat
// model's first stage sends four, held by the sends until the step ends). What such a stage holds
// is mostly its inputs and its sends, which recompute keeps too, so it saves nothing there.
bool pipeline_with_several_hand_overs(const plans::Plan& plan) {
  if (plan.pipe_axis < 0) return false;
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  std::map<int, int> sends_from_stage;
  for (const plans::CompiledLayer& layer : compiled.layers) {
    for (const plans::InputTransfer& input : layer.inputs) {
      if (input.forward_send) ++sends_from_stage[compiled.layers[static_cast<size_t>(input.producer)].stage];
    }
  }
  for (const auto& [stage, sends] : sends_from_stage) {
    if (sends > 1) return true;
  }
  return false;
}

// Recompute keeps only the stage's inputs between forward and backward, so on a pipeline's first
// stage, which has the most micro-batches in flight, the tracked activation peak must be below
// the same plan's without recompute (later stages may peak in a backward, where recompute saves
// nothing). The results are the same (equivalence_test.cc).
TEST(Equivalence, RecomputeLowersTheActivationPeak) {
  const int rank = world_rank();
  int lowered = 0;
  for (const PlanOutcome& o : suite().outcomes) {
    if (o.status != RunStatus::ran || !o.plan.recompute_activations || pipeline_with_several_hand_overs(o.plan))
      continue;
    const PlanOutcome* base = base_of(o, suite().outcomes);
    ASSERT_NE(base, nullptr) << plan_name(o.plan);
    if (base->status != RunStatus::ran) continue;
    const int stage = o.plan.pipe_axis >= 0 ? o.plan.mesh.coordinate(rank, o.plan.pipe_axis) : 0;
    // A first stage of one real layer (its output held by the hand-over anyway) has little to drop.
    int stage_layers = 0;
    for (int v = 0; v < o.plan.model->size(); ++v) {
      const bool first_stage = o.plan.stage_of_layer.empty() || o.plan.stage_of_layer[static_cast<size_t>(v)] == 0;
      stage_layers += first_stage && o.plan.model->layer(v).kind != model::OpKind::input ? 1 : 0;
    }
    if (stage == 0 && stage_layers >= 2 && sim::micro_batches_in_flight(o.plan, stage) > 1) {
      ++lowered;
      EXPECT_LT(o.activations_bytes, base->activations_bytes) << plan_name(o.plan) << " rank " << rank;
    }
  }
  // Pipelines on 2 and 4 ranks put several micro-batches in flight on their first stage (for
  // models whose pipelines the executor runs: GPT's tie the head to the first stage's table).
  int any = 0;
  MPI_Allreduce(&lowered, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bool pipelines_ran = false;
  for (const PlanOutcome& o : suite().outcomes) {
    pipelines_ran = pipelines_ran || (o.status == RunStatus::ran && o.plan.recompute_activations &&
                                      o.plan.pipe_axis >= 0 && !pipeline_with_several_hand_overs(o.plan));
  }
  if (world_size() > 1 && pipelines_ran) {
    EXPECT_GT(any, 0) << "no recompute plan had micro-batches in flight to save";
  }
}

}  // namespace
}  // namespace splitbrain::equivalence

namespace splitbrain::equivalence {
namespace {

// The step program (plans/step_compiler.h) is the one statement of a step's lifetimes: the
// executor's tracked memory per category, and at its worst moment, must be its walk's, exactly,
// for every plan (ZeRO 1-3, recompute and pipelines handing several tensors over included). The
// simulator reports the same walk (sim/memory_model.h), so this is predicted against measured.
TEST(Equivalence, TrackedMemoryIsTheStepProgramsWalk) {
  const int rank = world_rank();
  int compared = 0;
  for (const PlanOutcome& o : suite().outcomes) {
    if (o.status != RunStatus::ran) continue;
    const std::string name = plan_name(o.plan) + " rank " + std::to_string(rank);
    const plans::MemoryPeaks walk = expect_tracked_memory_is_the_walk(o, rank, name);
    const sim::MemoryBreakdown& predicted = o.prediction.ranks.at(static_cast<size_t>(rank)).memory;
    EXPECT_EQ(predicted.activations, walk.of(plans::MemoryCategory::activations)) << name;
    EXPECT_EQ(predicted.buffers, walk.of(plans::MemoryCategory::buffers)) << name;
    EXPECT_EQ(predicted.total(), walk.total) << name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace splitbrain::equivalence
