#pragma once
// Predicted against measured, instruction by instruction. The predicted trace (`simulate
// --trace`) and the measured one (`run --trace`) name their events alike
// (plans::instruction_label), so each rank's time summed per instruction, its micro-batches
// together, says where the time model misses: a convolution slower inside the step than its
// calibrated price, a redistribution it under-prices, a wait it does not foresee.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace splitbrain::tools {

// Where a measured trace keeps each rank's median seconds per instruction over its run's steps,
// and how many steps they are over (exec/runtime/measured_trace.h).
inline constexpr const char* kInstructionMediansKey = "instruction_seconds_median";
inline constexpr const char* kInstructionMedianStepsKey = "instruction_seconds_steps";

struct InstructionDifference {
  int rank = 0;
  std::string instruction;  // its label without the micro-batch ("forward conv2", "redistribute pool2")
  double predicted_seconds = 0.0;
  double measured_seconds = 0.0;
  double difference_seconds() const { return predicted_seconds - measured_seconds; }
};

// How many steps a measured trace's instruction medians are over; nullopt where it has none (then
// its one step's events are read). Throws InputError naming `source` when the count is missing or
// not a count of at least one step.
std::optional<int64_t> median_steps_of(const nlohmann::json& trace, const std::string& source);

// Every instruction of every rank that both traces have (by process id), summed over its events
// on the compute and communication rows (the host's queuing row is when it queued, not time
// spent), largest |difference| first. A measured trace that carries `instruction_seconds_median`
// (exec/runtime/measured_trace.h) is read from those medians over its steps instead of its one
// step's events. Gradient buckets' reductions are left out: an overlapped one's time falls on
// other instructions in a run than in the prediction (their waits stay). Throws InputError naming
// the source and the field when a trace's events are not well formed (trace_reader.h's
// trace_events) or its medians are not seconds from 0 to kMostReportSeconds.
std::vector<InstructionDifference> instruction_differences(const nlohmann::json& predicted,
                                                           const std::string& predicted_source,
                                                           const nlohmann::json& measured,
                                                           const std::string& measured_source);

nlohmann::ordered_json instruction_differences_to_json(const std::vector<InstructionDifference>& differences);

}  // namespace splitbrain::tools
