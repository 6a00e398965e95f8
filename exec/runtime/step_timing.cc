#include "exec/runtime/step_timing.h"

#include "plans/step_program.h"

namespace splitbrain::exec {

InstructionSeconds seconds_by_instruction(std::span<const TimelineEvent> timeline) {
  InstructionSeconds seconds;
  for (const TimelineEvent& event : timeline)
    seconds[plans::split_instruction_label(event.name).instruction] += event.seconds;
  return seconds;
}

}  // namespace splitbrain::exec
