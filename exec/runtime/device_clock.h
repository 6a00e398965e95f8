#pragma once
// DeviceClock: how a device's time is read (device.h): the clock a step is timed by, and the
// host's waits for the device's queued work.

#include <cstdint>
#include <memory>
#include <optional>

#include "exec/runtime/step_clock.h"

namespace splitbrain::exec {

class DeviceClock {
 public:
  virtual ~DeviceClock() = default;

  // The clock the step is timed by (step_clock.h): by default the host's, read at each mark,
  // right for a device that completes each call before returning (HostDevice); a device that
  // queues its work reads the time of its own queue.
  virtual std::unique_ptr<StepClock> make_step_clock() const;
  // How many times so far the host waited for the device's queued work to be done (an upload
  // whose host memory may go when it returns, a value read on the host, a collective staged
  // through host memory); none where the device queues nothing (HostDevice: the host computes).
  // The simulator says in which instructions of a step the host waits (sim::StageTiming).
  virtual std::optional<int64_t> host_waits() const { return std::nullopt; }
};

}  // namespace splitbrain::exec
