#pragma once
// What one step on this rank measured: seconds by phase (the prediction's vocabulary), the
// timeline of its instructions (for the measured Chrome trace) and the seconds of each instruction.

#include <map>
#include <span>
#include <string>
#include <vector>

namespace splitbrain::exec {

struct StepSeconds {
  double total = 0.0;
  double compute_forward = 0.0;
  double compute_backward = 0.0;  // with the recomputed forwards
  double communication = 0.0;     // redistributions, ZeRO 3's parameter gathers, host transfers
  // A pipeline stage waiting for another: its hand-overs' sends, receives and their waits. The
  // simulator books this time as the bubble (the step's time no other phase accounts for), and
  // so does the run report, so the two compare phase by phase.
  double stage_waiting = 0.0;
  double gradient_sync = 0.0;  // gradient buckets and ZeRO 1-2's parameter gathers (the exposed part)
  double optimizer = 0.0;
};

// One interval of the step on this rank.
struct TimelineEvent {
  std::string name;
  bool communication = false;  // else compute
  double start_seconds = 0.0;  // since the step began
  double seconds = 0.0;
  // When the host had queued it (its calls returned), since the step began. Where the host runs
  // ahead of the device (a GPU) an instruction whose queuing ends after the device went idle
  // starts late: a step whose host is slower than its kernels is paced by the host.
  double host_end_seconds = 0.0;
};

// Each instruction's seconds (its median over a run's steps, say), keyed as `compare` lines
// instructions up: the label without its micro-batch (plans::split_instruction_label), so a
// pipeline's micro-batches of one pass add up, as do an instruction's compute and communication
// intervals.
using InstructionSeconds = std::map<std::string, double>;

// Names a rank's instructions once, so that each step keeps only a number per instruction (a long
// run holds every step's): a step's seconds are a vector indexed as names().
class InstructionNames {
 public:
  // The step's seconds per instruction (keyed as InstructionSeconds), indexed as names(); a name
  // not seen before is added at the end.
  std::vector<double> seconds_of(std::span<const TimelineEvent> timeline);
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::map<std::string, size_t, std::less<>> index_;
  std::vector<std::string> names_;
};

}  // namespace splitbrain::exec
