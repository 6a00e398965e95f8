#include "plans/collective_residence.h"

namespace splitbrain::plans {

bool runs_on_device_memory(const Collective& collective) {
  switch (collective.kind) {
    case CollectiveKind::all_reduce:
      return true;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return collective.dim == 0;
    default:
      return false;
  }
}

bool runs_on_device_memory(std::span<const Collective> collectives) {
  return collectives.size() == 1 && runs_on_device_memory(collectives.front());
}

bool host_goes_on(const StepProgram& program, const StepInstruction& instruction) {
  switch (instruction.op) {
    case StepOp::wait:
      return host_goes_on(program, program.instructions.at(static_cast<size_t>(instruction.waits_for)));
    case StepOp::redistribute:
      if (!instruction.steps.empty()) return false;
      [[fallthrough]];
    case StepOp::reduce:
    case StepOp::gather_params:
      return runs_on_device_memory(instruction.collectives);
    default:
      return false;
  }
}

}  // namespace splitbrain::plans
