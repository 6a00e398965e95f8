#pragma once
// What every step program must satisfy, checked by walking it (shared by the plans and sim tests):
// each non-resident buffer is allocated once and freed once, later; an instruction touches only
// buffers alive at that point; dependencies point backwards and at the other stream; every layer
// of the rank's stage runs forward once and (but input layers) backward once per micro-batch,
// and a recompute plan recomputes each one before its backward; a receive posted with the next
// one is followed by it. Returns the problems found.

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::plans::testing {

inline std::vector<std::string> step_program_problems(const Plan& plan, const CompiledPlan& compiled,
                                                      const StepProgram& program) {
  std::vector<std::string> problems;
  std::vector<int> state(program.buffers.size(), 0);  // 0 never allocated, 1 alive, 2 freed
  for (int b : program.resident) state[static_cast<size_t>(b)] = 1;
  std::set<std::tuple<StepOp, int, int>> passes;
  for (size_t n = 0; n < program.instructions.size(); ++n) {
    const StepInstruction& i = program.instructions[n];
    const std::string where = fmt::format("instruction {} ({})", n, step_op_name(i.op));
    if (i.op == StepOp::alloc) {
      if (state.at(static_cast<size_t>(i.buffer)) != 0) problems.push_back(where + ": buffer allocated twice");
      state[static_cast<size_t>(i.buffer)] = 1;
      continue;
    }
    if (i.op == StepOp::free) {
      if (state.at(static_cast<size_t>(i.buffer)) != 1) problems.push_back(where + ": buffer freed while not alive");
      state[static_cast<size_t>(i.buffer)] = 2;
      continue;
    }
    for (const SmallIndexList* list : {&i.reads, &i.writes}) {
      for (int b : *list) {
        if (state.at(static_cast<size_t>(b)) != 1) {
          problems.push_back(fmt::format("{}: touches buffer {} ('{}') that is not alive", where, b,
                                         buffer_name(*plan.model, program.buffers[static_cast<size_t>(b)])));
        }
      }
    }
    if (i.posted_with_next) {
      const bool next_receives = n + 1 < program.instructions.size() && program.instructions[n + 1].op == StepOp::recv;
      if (i.op != StepOp::recv || !next_receives) problems.push_back(where + ": posted with a next that is no receive");
    }
    for (int a : i.after) {
      if (a < 0 || static_cast<size_t>(a) >= n)
        problems.push_back(fmt::format("{}: depends on later instruction {}", where, a));
    }
    if (i.op == StepOp::forward || i.op == StepOp::backward || i.op == StepOp::recompute) {
      if (!passes.insert({i.op, i.layer, i.micro_batch}).second) problems.push_back(where + ": pass repeated");
      // The operands by role are the buffers the pass reads and writes, one input per position.
      const PassOperands& o = operands_of(program, i);
      const size_t positions = plan.model->layer(i.layer).inputs.size();
      if (o.inputs.size() != positions) problems.push_back(where + ": not one input operand per input position");
      if (i.op == StepOp::backward && o.input_gradients.size() != positions) {
        problems.push_back(where + ": not one input-gradient operand per input position");
      }
      if (i.op != StepOp::backward &&
          (o.output < 0 || o.inputs.end() != std::find(o.inputs.begin(), o.inputs.end(), -1))) {
        problems.push_back(where + ": a forward without its output or an input");
      }
      std::vector<int> named(o.inputs.begin(), o.inputs.end());
      named.insert(named.end(), {o.output, o.output_gradient, o.kept});
      named.insert(named.end(), o.parameters.begin(), o.parameters.end());
      named.insert(named.end(), o.input_gradients.begin(), o.input_gradients.end());
      named.insert(named.end(), o.parameter_gradients.begin(), o.parameter_gradients.end());
      std::erase(named, -1);
      std::vector<int> touched(i.reads.begin(), i.reads.end());
      touched.insert(touched.end(), i.writes.begin(), i.writes.end());
      std::sort(named.begin(), named.end());
      std::sort(touched.begin(), touched.end());
      if (named != touched) problems.push_back(where + ": operands differ from the buffers it reads and writes");
    }
  }
  for (size_t b = 0; b < state.size(); ++b) {
    const bool resident =
        std::find(program.resident.begin(), program.resident.end(), static_cast<int>(b)) != program.resident.end();
    if (!resident && state[b] != 2) {
      problems.push_back(fmt::format("buffer {} ('{}') is not freed by the end of the step", b,
                                     buffer_name(*plan.model, program.buffers[b])));
    }
  }
  const model::Model& net = *plan.model;
  for (int v = 0; v < net.size(); ++v) {
    if (compiled.layers[static_cast<size_t>(v)].stage != program.stage) continue;
    const bool input = net.layer(v).kind == model::OpKind::input;
    for (int micro = 0; micro < plan.micro_batches; ++micro) {
      const bool forward = passes.contains({StepOp::forward, v, micro}) || (input && !passes.empty());
      if (!forward) problems.push_back(fmt::format("layer {} mb{}: no forward", net.layer(v).name, micro));
      if (!input && !passes.contains({StepOp::backward, v, micro})) {
        problems.push_back(fmt::format("layer {} mb{}: no backward", net.layer(v).name, micro));
      }
      if (!input && plan.recompute_activations && !passes.contains({StepOp::recompute, v, micro})) {
        problems.push_back(fmt::format("layer {} mb{}: not recomputed", net.layer(v).name, micro));
      }
    }
  }
  return problems;
}

}  // namespace splitbrain::plans::testing
