#include "tools/comparison/trace_differences.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "model/errors.h"
#include "plans/step_program.h"
#include "tools/comparison/comparison.h"
#include "tools/comparison/trace_reader.h"

namespace splitbrain::tools {
namespace {

constexpr double kSecondsPerMicrosecond = 1e-6;
// Both traces put the host's queuing on row 2 (sim/chrome_trace.cc, exec/runtime/measured_trace.cc).
constexpr int kHostQueuingRow = 2;

// A gradient bucket's reduction is not compared: the prediction draws an overlapped one over its
// whole time on the communication stream and charges the host the share not hidden at its start,
// while the executor's host only starts it there and pays the rest in the instructions after it
// and at its wait (which both traces show as `wait`).
const std::string kReducePrefix = std::string(plans::step_op_name(plans::StepOp::reduce)) + " ";

using SecondsByInstruction = std::map<std::pair<int, std::string>, double>;  // (rank, instruction)

// A measured trace's medians over its steps (exec/runtime/measured_trace.h).
SecondsByInstruction seconds_from_medians(const nlohmann::json& medians, const std::string& source) {
  if (!medians.is_array() || medians.size() > static_cast<size_t>(kMostTraceRanks)) {
    throw InputError(fmt::format("{}: {}: must be an array (one object per rank, at most {})", source,
                                 kInstructionMediansKey, kMostTraceRanks));
  }
  SecondsByInstruction seconds;
  for (size_t rank = 0; rank < medians.size(); ++rank) {
    if (!medians[rank].is_object())
      throw InputError(fmt::format("{}: {}[{}]: must be an object", source, kInstructionMediansKey, rank));
    for (const auto& [instruction, value] : medians[rank].items()) {
      const double seconds_of_instruction = value.is_number() ? value.get<double>() : -1.0;
      if (!(seconds_of_instruction >= 0.0 && seconds_of_instruction <= kMostReportSeconds)) {  // NaN too
        throw InputError(fmt::format("{}: {}[{}].{}: must be a number of seconds from 0 to {:g}", source,
                                     kInstructionMediansKey, rank, instruction, kMostReportSeconds));
      }
      if (instruction.starts_with(kReducePrefix)) continue;
      seconds[{static_cast<int>(rank), instruction}] = seconds_of_instruction;
    }
  }
  return seconds;
}

SecondsByInstruction seconds_by_instruction(const nlohmann::json& trace, const std::string& source) {
  if (median_steps_of(trace, source)) return seconds_from_medians(trace.at(kInstructionMediansKey), source);
  SecondsByInstruction seconds;
  const nlohmann::json& events = trace_events(trace, source);
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& event = events[i];  // checked by trace_events
    if (event.at("ph") != "X") continue;
    if (event.value("tid", 0) == kHostQueuingRow) continue;
    const std::string name = event.at("name").get<std::string>();
    if (name.starts_with(kReducePrefix)) continue;
    // Micro-batches of one instruction add up.
    seconds[{event.value("pid", 0), plans::split_instruction_label(name).instruction}] +=
        event.at("dur").get<double>() * kSecondsPerMicrosecond;
  }
  return seconds;
}

}  // namespace

std::optional<int64_t> median_steps_of(const nlohmann::json& trace, const std::string& source) {
  if (!trace.is_object() || !trace.contains(kInstructionMediansKey)) return std::nullopt;
  const auto steps = trace.find(kInstructionMedianStepsKey);
  if (steps == trace.end() || !steps->is_number_integer() || steps->get<int64_t>() < 1) {
    throw InputError(fmt::format("{}: {}: must be a count of steps, at least 1 (the trace has {})", source,
                                 kInstructionMedianStepsKey, kInstructionMediansKey));
  }
  return steps->get<int64_t>();
}

std::vector<InstructionDifference> instruction_differences(const nlohmann::json& predicted,
                                                           const std::string& predicted_source,
                                                           const nlohmann::json& measured,
                                                           const std::string& measured_source) {
  const SecondsByInstruction on_predicted = seconds_by_instruction(predicted, predicted_source);
  const SecondsByInstruction on_measured = seconds_by_instruction(measured, measured_source);
  const auto ranks_of = [](const SecondsByInstruction& seconds) {
    std::set<int> ranks;
    for (const auto& entry : seconds) ranks.insert(entry.first.first);
    return ranks;
  };
  std::map<std::pair<int, std::string>, InstructionDifference> merged;
  const auto add = [&](const SecondsByInstruction& seconds, const std::set<int>& other_ranks, bool is_predicted) {
    for (const auto& [key, value] : seconds) {
      if (!other_ranks.contains(key.first)) continue;
      InstructionDifference& d = merged[key];
      d.rank = key.first;
      d.instruction = key.second;
      (is_predicted ? d.predicted_seconds : d.measured_seconds) = value;
    }
  };
  add(on_predicted, ranks_of(on_measured), true);
  add(on_measured, ranks_of(on_predicted), false);
  std::vector<InstructionDifference> differences;
  for (auto& [key, difference] : merged) differences.push_back(std::move(difference));
  std::stable_sort(differences.begin(), differences.end(), [](const auto& a, const auto& b) {
    return std::abs(a.difference_seconds()) > std::abs(b.difference_seconds());
  });
  return differences;
}

nlohmann::ordered_json instruction_differences_to_json(const std::vector<InstructionDifference>& differences) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const InstructionDifference& d : differences) {
    rows.push_back({{"rank", d.rank},
                    {"instruction", d.instruction},
                    {"predicted_seconds", d.predicted_seconds},
                    {"measured_seconds", d.measured_seconds}});
  }
  return rows;
}

}  // namespace splitbrain::tools
