#pragma once
// Predicted against measured: where the host waits for a device that queues its work (a GPU). The
// prediction names, per pipeline stage, the instructions of the stage's step program in which the
// host waits (stages[s].host_wait_instructions: the simulator's InstructionCost::host_waits); the
// run report names, per rank, those it waited in (ranks[r].host_waits_per_step.at, counted by the
// device: exec::DeviceClock::host_waits). Both number the same program's instructions
// (`splitbrain program` lists them), so they must be the same list: a difference is a wait the
// time model does not price, or prices where the executor does not wait.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace splitbrain::tools {

struct RankHostWaits {
  int rank = 0;
  std::vector<int> predicted;  // instruction indices, ascending
  std::vector<int> measured;   // of the run's last measured step
  double measured_per_step = 0.0;
  bool equal() const { return predicted == measured; }
};

struct HostWaitComparison {
  bool compared = false;
  // When !compared: why; empty when the run's host never waits for a queue (a CPU run), which has
  // nothing to compare.
  std::string why_not;
  std::vector<RankHostWaits> ranks;
  bool equal() const;
};

// Reads both reports' ranks (compare_reports checked them first). A measurement without
// host_waits_per_step (a CPU run: the host computes) or a prediction without the stages' lists
// (an older one) is not an error: the result says why nothing was compared. A field present but
// malformed is an InputError naming the file and the field.
HostWaitComparison compare_host_waits(const nlohmann::json& predicted, const std::string& predicted_source,
                                      const nlohmann::json& measured, const std::string& measured_source);

nlohmann::ordered_json host_wait_comparison_to_json(const HostWaitComparison& comparison);

}  // namespace splitbrain::tools
