#pragma once
// Pipelines and hand-set prices for the timeline's tests (program_timeline_test.cc,
// program_timeline_sharing_test.cc): fashion-vgg cut into stages, each stage's step program,
// and prices that charge a stage's whole forward or backward pass to one layer.

#include <algorithm>
#include <utility>
#include <vector>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/program_timeline.h"

namespace splitbrain::sim::testing {

// fashion-vgg cut into `stages` stages of consecutive layers, batch over the data axis.
inline plans::Plan pipeline(int stages, int micro_batches, plans::PipelineSchedule schedule) {
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", stages}, {"data", 1}}), 8 * micro_batches,
                                       [](const model::Layer&) {
                                         return plans::LayerSharding{{1}, {}, {}, {}};
                                       });
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

inline Priced programs_of(const plans::Plan& plan) {
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Priced priced;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    priced.programs.push_back(plans::compile_step(plan, compiled, stage));  // rank s is stage s ({pipe: S, data: 1})
    int first = -1;
    int last = -1;
    for (int v = 0; v < plan.model->size(); ++v) {
      if (plan.stage_of_layer[static_cast<size_t>(v)] != stage || plan.model->layer(v).kind == model::OpKind::input)
        continue;
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
inline InstructionPricer pass_prices(const Priced& priced, std::vector<double> forward, std::vector<double> backward,
                                     double send) {
  return [&priced, forward, backward, send](int stage, const plans::StepInstruction& i) {
    InstructionCost cost;
    const auto s = static_cast<size_t>(stage);
    if (i.op == plans::StepOp::forward && i.layer == priced.first_layer[s]) cost.compute_seconds = forward[s];
    if (i.op == plans::StepOp::backward && i.layer == priced.last_layer[s]) cost.compute_seconds = backward[s];
    if (i.op == plans::StepOp::send) cost.communication_seconds = send;
    return cost;
  };
}

inline double end_of(const ProgramTimeline& timeline) {
  double end = 0.0;
  for (const StageTimeline& stage : timeline.stages) end = std::max(end, stage.end_seconds);
  return end;
}

}  // namespace splitbrain::sim::testing
