#include "exec/runtime/measured_trace.h"

#include <fmt/format.h>
#include <mpi.h>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec {
namespace {
constexpr double kMicrosecondsPerSecond = 1e6;
}

nlohmann::json gather_measured_trace(Trainer& trainer) {
  nlohmann::json mine = nlohmann::json::array();
  for (const TimelineEvent& e : trainer.last_step_timeline()) {
    mine.push_back({e.name, e.communication, e.start_seconds, e.seconds});
  }
  const std::string text = mine.dump();
  const MPI_Comm world = trainer.communicator().communicators().world();
  int size = 0;
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_size(world, &size));
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  SB_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world));
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  for (size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(rank == 0 ? static_cast<size_t>(offsets.back() + lengths.back()) : 0, '\0');
  SB_MPI_CHECK(
      MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, world));
  if (rank != 0) return {};

  nlohmann::json events = nlohmann::json::array();
  for (int r = 0; r < size; ++r) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"args", {{"name", fmt::format("rank {} (measured)", r)}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", 1}, {"args", {{"name", "communication"}}}});
    const auto ranks_events = nlohmann::json::parse(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                                                               static_cast<size_t>(lengths[static_cast<size_t>(r)])));
    for (const auto& e : ranks_events) {
      const bool communication = e[1].get<bool>();
      events.push_back({{"name", e[0]},
                        {"cat", communication ? "communication" : "compute"},
                        {"ph", "X"},
                        {"pid", r},
                        {"tid", communication ? 1 : 0},
                        {"ts", e[2].get<double>() * kMicrosecondsPerSecond},
                        {"dur", e[3].get<double>() * kMicrosecondsPerSecond}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace splitbrain::exec
