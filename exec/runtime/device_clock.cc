#include "exec/runtime/device_clock.h"

namespace splitbrain::exec {

std::unique_ptr<StepClock> DeviceClock::make_step_clock() const { return std::make_unique<HostStepClock>(); }

}  // namespace splitbrain::exec
