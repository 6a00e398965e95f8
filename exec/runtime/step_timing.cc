#include "exec/runtime/step_timing.h"

#include "plans/step_program.h"

namespace splitbrain::exec {

std::vector<double> InstructionNames::seconds_of(std::span<const TimelineEvent> timeline) {
  std::vector<double> seconds(names_.size(), 0.0);
  for (const TimelineEvent& event : timeline) {
    std::string name = plans::split_instruction_label(event.name).instruction;
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, names_.size()).first;
      names_.push_back(std::move(name));
      seconds.push_back(0.0);
    }
    seconds[it->second] += event.seconds;
  }
  return seconds;
}

}  // namespace splitbrain::exec
