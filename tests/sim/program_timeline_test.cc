// The step's timeline from the stages' step programs, with hand-set prices: the pipeline
// schedules' closed forms, the hand-overs on the critical path, and a program whose message
// never comes.

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/program_timeline.h"

namespace splitbrain::sim {
namespace {

using plans::PipelineSchedule;
using plans::StepInstruction;
using plans::StepOp;

// fashion-vgg cut into `stages` stages of consecutive layers, batch over the data axis.
plans::Plan pipeline(int stages, int micro_batches, PipelineSchedule schedule) {
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", stages}, {"data", 1}}), 8 * micro_batches,
                                       [](const model::Layer&) { return plans::LayerSharding{{1}, {}, {}, {}}; });
  plan.pipe_axis = 0;
  plan.micro_batches = micro_batches;
  plan.schedule = schedule;
  const int layers = plan.model->size();
  for (int i = 0; i < layers; ++i) plan.stage_of_layer[static_cast<size_t>(i)] = i * stages / layers;
  return plan;
}

struct Priced {
  std::vector<plans::StepProgram> programs;
  std::vector<int> first_layer;  // per stage: its first layer that computes
  std::vector<int> last_layer;
};

Priced programs_of(const plans::Plan& plan) {
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Priced priced;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    priced.programs.push_back(plans::compile_step(plan, compiled, stage));  // rank s is stage s ({pipe: S, data: 1})
    int first = -1;
    int last = -1;
    for (int v = 0; v < plan.model->size(); ++v) {
      if (plan.stage_of_layer[static_cast<size_t>(v)] != stage || plan.model->layer(v).kind == model::OpKind::input) continue;
      if (first < 0) first = v;
      last = v;
    }
    priced.first_layer.push_back(first);
    priced.last_layer.push_back(last);
  }
  return priced;
}

// A stage's forward pass costs `forward[s]` (charged to its first layer), its backward pass
// `backward[s]` (charged to its last layer, where the backward starts), a hand-over `send`;
// nothing else costs anything.
InstructionPricer pass_prices(const Priced& priced, std::vector<double> forward, std::vector<double> backward,
                              double send) {
  return [&priced, forward, backward, send](int stage, const StepInstruction& i) {
    InstructionCost cost;
    const auto s = static_cast<size_t>(stage);
    if (i.op == StepOp::forward && i.layer == priced.first_layer[s]) cost.compute_seconds = forward[s];
    if (i.op == StepOp::backward && i.layer == priced.last_layer[s]) cost.compute_seconds = backward[s];
    if (i.op == StepOp::send) cost.communication_seconds = send;
    return cost;
  };
}

double end_of(const ProgramTimeline& timeline) {
  double end = 0.0;
  for (const StageTimeline& stage : timeline.stages) end = std::max(end, stage.end_seconds);
  return end;
}

TEST(ProgramTimeline, UniformStagesTakeMicroBatchesPlusStagesMinusOneSlots) {
  // S uniform stages, M micro-batches, F forward and B backward per micro-batch, free hand-over:
  // both GPipe and 1F1B take (M + S - 1)(F + B) (Huang et al. 2019; Narayanan et al. 2019).
  const double f = 1.0;
  const double b = 2.0;
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int stages : {1, 2, 4}) {
      for (int micro : {1, 3, 8}) {
        const Priced priced = programs_of(pipeline(stages, micro, schedule));
        const auto per_stage = static_cast<size_t>(stages);
        const ProgramTimeline timeline = run_program_timeline(
            priced.programs, pass_prices(priced, std::vector<double>(per_stage, f), std::vector<double>(per_stage, b), 0.0),
            1.0);
        EXPECT_DOUBLE_EQ(end_of(timeline), (micro + stages - 1) * (f + b))
            << "stages " << stages << " micro-batches " << micro;
        EXPECT_EQ(timeline.passes.size(), static_cast<size_t>(2 * stages * micro));
        // A stage's time is its passes and its waits; the first stage ends last, having waited
        // the whole bubble, (S - 1)(F + B).
        for (const StageTimeline& stage : timeline.stages) {
          EXPECT_NEAR(stage.phases.waiting + micro * (f + b), stage.end_seconds, 1e-12);
        }
        EXPECT_NEAR(timeline.stages[0].phases.waiting, (stages - 1) * (f + b), 1e-12);
      }
    }
  }
}

TEST(ProgramTimeline, SlowestStageAndHandOverSetThePace) {
  // Two stages, the second twice as slow; each hand-over takes 0.5.
  const Priced priced = programs_of(pipeline(2, 1, PipelineSchedule::gpipe));
  const ProgramTimeline one = run_program_timeline(priced.programs, pass_prices(priced, {1.0, 2.0}, {1.0, 2.0}, 0.5), 1.0);
  // F0 on stage 0 [0, 1], hand-over to 1.5, F0 on stage 1 [1.5, 3.5], B0 [3.5, 5.5], hand-over
  // to 6 (stage 1 waits for its send), B0 on stage 0 [6, 7].
  EXPECT_DOUBLE_EQ(one.stages[1].backward_end_seconds, 5.5);
  EXPECT_DOUBLE_EQ(one.stages[1].end_seconds, 6.0);
  EXPECT_DOUBLE_EQ(one.stages[0].end_seconds, 7.0);
  EXPECT_DOUBLE_EQ(one.stages[0].phases.waiting, 5.0);
}

TEST(ProgramTimeline, AStageWhoseMessageNeverComesIsADeadlock) {
  const Priced priced = programs_of(pipeline(2, 2, PipelineSchedule::one_f_one_b));
  const std::vector<plans::StepProgram> second_only = {priced.programs[1]};
  // Stage 1's program alone, as stage 0: nobody sends what it receives.
  EXPECT_THROW(run_program_timeline(second_only, [](int, const StepInstruction&) { return InstructionCost{}; }, 1.0),
               std::logic_error);
}

}  // namespace
}  // namespace splitbrain::sim
