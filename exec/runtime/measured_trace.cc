#include "exec/runtime/measured_trace.h"

#include <fmt/format.h>
#include <mpi.h>

#include "exec/comm/gather_texts.h"
#include "exec/runtime/shared_time_axis.h"

namespace splitbrain::exec {
namespace {
constexpr double kMicrosecondsPerSecond = 1e6;
}

nlohmann::json gather_measured_trace(Trainer& trainer, const RunRecord& record) {
  nlohmann::json events_of_mine = nlohmann::json::array();
  for (const TimelineEvent& e : trainer.last_step_timeline()) {
    events_of_mine.push_back({e.name, e.communication, e.start_seconds, e.seconds, e.host_end_seconds});
  }
  const nlohmann::json mine = {
      {"clock", steady_clock_domain()},
      {"started_at", trainer.last_step_started_at_seconds()},
      {"host_runs_ahead", trainer.last_step_host_ran_ahead()},
      {"events", events_of_mine},
      {"instruction_seconds", median_seconds_by_instruction(record, trainer.instruction_names())}};
  const MPI_Comm world = trainer.communicator().communicators().world();
  const std::vector<std::string> texts = comm::gather_texts(mine.dump(), world);
  if (texts.empty()) return {};  // not rank 0

  std::vector<nlohmann::json> of_rank;
  std::vector<std::string> clocks;
  std::vector<double> starts;
  for (const std::string& text : texts) {
    of_rank.push_back(nlohmann::json::parse(text));
    clocks.push_back(of_rank.back()["clock"].get<std::string>());
    starts.push_back(of_rank.back()["started_at"].get<double>());
  }
  const std::vector<double> shifts = shared_axis_offsets_seconds(clocks, starts);
  nlohmann::json medians = nlohmann::json::array();
  for (const nlohmann::json& rank_part : of_rank) medians.push_back(rank_part["instruction_seconds"]);
  const auto size = static_cast<int>(texts.size());
  nlohmann::json events = nlohmann::json::array();
  for (int r = 0; r < size; ++r) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"args", {{"name", fmt::format("rank {} (measured)", r)}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", 1}, {"args", {{"name", "communication"}}}});
    const double shift = shifts[static_cast<size_t>(r)];
    // Where the host queues ahead of the device, a third row: when the host queued each
    // instruction (from the end of the one before), so a step paced by its host shows as device
    // rows waiting on host spans.
    const bool host_row = of_rank[static_cast<size_t>(r)]["host_runs_ahead"].get<bool>();
    if (host_row) {
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", 2}, {"args", {{"name", "host (queuing)"}}}});
    }
    double host_start = 0.0;
    for (const auto& e : of_rank[static_cast<size_t>(r)]["events"]) {
      if (host_row) {
        const double host_end = e[4].get<double>();
        events.push_back({{"name", e[0]},
                          {"cat", "host"},
                          {"ph", "X"},
                          {"pid", r},
                          {"tid", 2},
                          {"ts", (shift + host_start) * kMicrosecondsPerSecond},
                          {"dur", (host_end - host_start) * kMicrosecondsPerSecond}});
        host_start = host_end;
      }
      const bool communication = e[1].get<bool>();
      events.push_back({{"name", e[0]},
                        {"cat", communication ? "communication" : "compute"},
                        {"ph", "X"},
                        {"pid", r},
                        {"tid", communication ? 1 : 0},
                        {"ts", (shift + e[2].get<double>()) * kMicrosecondsPerSecond},
                        {"dur", e[3].get<double>() * kMicrosecondsPerSecond}});
    }
  }
  return {{"traceEvents", events},
          {"displayTimeUnit", "ms"},
          {"instruction_seconds_median", medians},
          {"instruction_seconds_steps", measured_steps(record).size()}};
}

}  // namespace splitbrain::exec
