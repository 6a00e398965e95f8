#include "plans/collective_residence.h"

namespace splitbrain::plans {

bool runs_on_device_memory(const Collective& collective) {
  switch (collective.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
      return true;
    default:
      return false;
  }
}

bool runs_on_device_memory(std::span<const Collective> collectives) {
  if (collectives.empty()) return false;
  for (const Collective& collective : collectives) {
    if (!runs_on_device_memory(collective)) return false;
  }
  return true;
}

bool host_goes_on(const StepProgram& program, const StepInstruction& instruction, bool grouped_hand_overs) {
  switch (instruction.op) {
    case StepOp::wait:
      return host_goes_on(program, program.instructions.at(static_cast<size_t>(instruction.waits_for)),
                          grouped_hand_overs);
    case StepOp::send:
    case StepOp::recv:
      return grouped_hand_overs;
    case StepOp::redistribute:
      if (!instruction.steps.empty()) {
        for (const RedistributionStep& step : instruction.steps) {
          if (step.collective && !runs_on_device_memory(*step.collective)) return false;
        }
        return true;
      }
      [[fallthrough]];
    case StepOp::reduce:
    case StepOp::gather_params:
      return runs_on_device_memory(instruction.collectives);
    default:
      return false;
  }
}

}  // namespace splitbrain::plans
