#include "plans/step_program.h"

namespace splitbrain::plans {

std::string_view memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::params: return "params";
    case MemoryCategory::grads: return "grads";
    case MemoryCategory::optimizer: return "optimizer";
    case MemoryCategory::activations: return "activations";
    case MemoryCategory::buffers: return "buffers";
  }
  return "?";
}

std::string_view step_op_name(StepOp op) {
  switch (op) {
    case StepOp::alloc: return "alloc";
    case StepOp::free: return "free";
    case StepOp::load_input: return "load_input";
    case StepOp::forward: return "forward";
    case StepOp::recompute: return "recompute";
    case StepOp::backward: return "backward";
    case StepOp::redistribute: return "redistribute";
    case StepOp::accumulate: return "accumulate";
    case StepOp::send: return "send";
    case StepOp::recv: return "recv";
    case StepOp::wait: return "wait";
    case StepOp::pack: return "pack";
    case StepOp::unpack: return "unpack";
    case StepOp::reduce: return "reduce";
    case StepOp::optimizer: return "optimizer";
    case StepOp::gather_params: return "gather_params";
    case StepOp::loss_out: return "loss_out";
  }
  return "?";
}

std::vector<Collective> collectives_of(const StepInstruction& instruction) {
  std::vector<Collective> all;
  for (const RedistributionStep& step : instruction.steps) {
    if (step.collective) all.push_back(*step.collective);
  }
  all.insert(all.end(), instruction.collectives.begin(), instruction.collectives.end());
  return all;
}

std::string_view stream_name(Stream stream) { return stream == Stream::compute ? "compute" : "communication"; }

}  // namespace splitbrain::plans
