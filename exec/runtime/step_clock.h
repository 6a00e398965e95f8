#pragma once
// StepClock: reads the time of a device's queue at marks placed between calls, without making
// the host wait at each mark. A device whose calls return before their work is done (a GPU
// stream) would otherwise have to drain its queue at every reading, and the step it measures
// would be its own waits and relaunches, not the plan. The step interpreter marks each timed
// instruction; calibrate marks each kernel problem's run; both read the marks once, at the end.

#include <chrono>
#include <vector>

namespace splitbrain::exec {

class StepClock {
 public:
  virtual ~StepClock() = default;
  // A new timeline from here: the work queued after this call is timed from it (earlier marks
  // are forgotten).
  virtual void start() = 0;
  // A reading taken when the work queued so far has finished.
  virtual void mark() = 0;
  // Seconds from start() to each mark() since, in order. Waits for the last mark.
  virtual std::vector<double> seconds_since_start() = 0;
  // Whether the host returns from a call before the device has done its work, so the host can
  // queue ahead of the device (or, where issuing is slower than the work, fall behind it).
  virtual bool host_runs_ahead() const = 0;
};

// The host's steady clock, read at each mark: right for a device whose calls return when their
// work is done (the CPU backend), where a mark is simply now.
class HostStepClock final : public StepClock {
 public:
  void start() override;
  void mark() override;
  std::vector<double> seconds_since_start() override;
  bool host_runs_ahead() const override { return false; }

 private:
  std::chrono::steady_clock::time_point start_;
  std::vector<double> seconds_;
};

}  // namespace splitbrain::exec
