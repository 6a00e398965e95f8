#include "exec/runtime/step_clock.h"

namespace splitbrain::exec {

void HostStepClock::start() {
  seconds_.clear();
  start_ = std::chrono::steady_clock::now();
}

void HostStepClock::mark() {
  seconds_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

std::vector<double> HostStepClock::seconds_since_start() { return seconds_; }

}  // namespace splitbrain::exec
