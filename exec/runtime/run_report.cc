#include "exec/runtime/run_report.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "exec/comm/gather_texts.h"
#include "exec/comm/mpi_check.h"
#include "exec/runtime/host_transfers.h"
#include "exec/runtime/shared_time_axis.h"
#include "plans/collective_kind.h"

namespace splitbrain::exec {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// What each rank contributes, as doubles for one MPI_Gather.
enum Field {
  kPeak,
  kParams,
  kGrads,
  kOptimizer,
  kActivations,
  kBuffers,
  kRss,
  kBytesPerStep,
  kTransfersPerStep,
  kTransferBytesPerStep,
  kWithinHostBytesPerStep,
  kAcrossHostsBytesPerStep,
  kSplitByHost,
  kHasDeviceMemory,
  kAllocatorPeak,
  kAllocatorReserved,
  kDriverUsed,
  kHasRecordedCalls,
  kRecordedPerStep,
  kReplayedPerStep,
  kDirectPerStep,
  kHasHostWaits,
  kHostWaitInstructionsPerStep,
  kTransfersByPurposePerStep,  // one field per HostTransferPurpose from here
  kFields = kTransfersByPurposePerStep + static_cast<int>(kHostTransferPurposes.size())
};

// Each rank's `mine` on rank 0 (rank r's at [r]); empty elsewhere.
std::vector<std::vector<int>> gather_int_lists(const std::vector<int>& mine, int ranks, MPI_Comm world) {
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(ranks));
  SB_MPI_CHECK(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world));
  std::vector<int> offsets(static_cast<size_t>(ranks));
  for (int r = 1; r < ranks; ++r)
    offsets[static_cast<size_t>(r)] = offsets[static_cast<size_t>(r - 1)] + counts[static_cast<size_t>(r - 1)];
  std::vector<int> all(static_cast<size_t>(offsets.back() + counts.back()));
  SB_MPI_CHECK(MPI_Gatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT, 0, world));
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  std::vector<std::vector<int>> lists;
  if (rank != 0) return lists;
  for (int r = 0; r < ranks; ++r) {
    const auto first = all.begin() + offsets[static_cast<size_t>(r)];
    lists.emplace_back(first, first + counts[static_cast<size_t>(r)]);
  }
  return lists;
}

// Per measured step, how long it lasted: step_span_seconds over the ranks that take turns on cores
// (their starts differ by the turns they waited for), each other rank's own time (one that left
// the step's barrier a network hop after another did not take that hop longer). The median over
// the steps, at rank 0 (elsewhere this rank's own median). Collective over `world`.
double median_step_span_seconds(const std::vector<const StepResult*>& measured,
                                const std::vector<comm::RankPlacement>& placement, MPI_Comm world) {
  std::vector<double> starts;
  std::vector<double> totals;
  for (const StepResult* s : measured) {
    starts.push_back(s->started_at_seconds);
    totals.push_back(s->seconds.total);
  }
  const nlohmann::json mine = {{"clock", steady_clock_domain()}, {"started_at", starts}, {"seconds", totals}};
  const std::vector<std::string> texts = comm::gather_texts(mine.dump(), world);
  if (texts.empty()) return median(totals);
  std::vector<nlohmann::json> of_rank;
  std::vector<std::string> turn_takers;  // ranks with one label read one clock and take turns
  const std::vector<int> groups = comm::job_core_sharing_groups(placement);
  for (size_t r = 0; r < texts.size(); ++r) {
    of_rank.push_back(nlohmann::json::parse(texts[r]));
    const std::string clock = of_rank.back()["clock"].get<std::string>();
    // Without a recorded placement, every rank of one clock is taken to share.
    turn_takers.push_back(clock.empty() || groups.size() != texts.size() ? clock
                                                                         : fmt::format("{}/{}", clock, groups[r]));
  }
  std::vector<double> spans;
  for (size_t step = 0; step < measured.size(); ++step) {
    std::vector<double> step_starts;
    std::vector<double> step_seconds;
    for (const nlohmann::json& rank_part : of_rank) {
      step_starts.push_back(rank_part["started_at"][step].get<double>());
      step_seconds.push_back(rank_part["seconds"][step].get<double>());
    }
    spans.push_back(step_span_seconds(turn_takers, step_starts, step_seconds));
  }
  return median(spans);
}

}  // namespace

std::vector<const StepResult*> measured_steps(const RunRecord& record) {
  std::vector<const StepResult*> measured;
  for (size_t i = static_cast<size_t>(std::max(record.warmup, 0)); i < record.steps.size(); ++i)
    measured.push_back(&record.steps[i]);
  return measured;
}

InstructionSeconds median_seconds_by_instruction(const RunRecord& record, std::span<const std::string> names) {
  const std::vector<const StepResult*> measured = measured_steps(record);
  InstructionSeconds medians;
  for (size_t k = 0; k < names.size(); ++k) {
    // Steps from before the instruction was first named have no entry for it: they count 0.
    std::vector<double> values;
    bool measured_once = false;
    for (const StepResult* step : measured) {
      const bool has = k < step->seconds_by_instruction.size();
      measured_once |= has;
      values.push_back(has ? step->seconds_by_instruction[k] : 0.0);
    }
    if (measured_once) medians[names[k]] = median(std::move(values));
  }
  return medians;
}

nlohmann::ordered_json gather_run_report(Trainer& trainer, const plans::Plan& plan, const RunRecord& record) {
  const int steps = static_cast<int>(record.steps.size());
  const std::vector<const StepResult*> measured = measured_steps(record);
  auto median_of = [&](double StepSeconds::*field) {
    std::vector<double> values;
    for (const StepResult* s : measured) values.push_back(s->seconds.*field);
    return median(values);
  };

  const MemoryTracker& memory = trainer.memory();
  std::array<double, kFields> mine{};
  mine[kPeak] = static_cast<double>(memory.peak_total());
  mine[kParams] = static_cast<double>(memory.peak(MemoryCategory::params));
  mine[kGrads] = static_cast<double>(memory.peak(MemoryCategory::grads));
  mine[kOptimizer] = static_cast<double>(memory.peak(MemoryCategory::optimizer));
  mine[kActivations] = static_cast<double>(memory.peak(MemoryCategory::activations));
  mine[kBuffers] = static_cast<double>(memory.peak(MemoryCategory::buffers));
  mine[kRss] = static_cast<double>(peak_resident_bytes());
  mine[kBytesPerStep] = steps > 0 ? static_cast<double>(record.bytes.total().bytes) / steps : 0.0;
  const comm::HostLevelBytes by_host = record.bytes.total().bytes_by_host_level;
  mine[kWithinHostBytesPerStep] =
      steps > 0 ? static_cast<double>(by_host[static_cast<size_t>(comm::HostLevel::within_host)]) / steps : 0.0;
  mine[kAcrossHostsBytesPerStep] =
      steps > 0 ? static_cast<double>(by_host[static_cast<size_t>(comm::HostLevel::across_hosts)]) / steps : 0.0;
  mine[kSplitByHost] = record.bytes.split_by_host_level() ? 1.0 : 0.0;
  if (const std::optional<DeviceMemoryUse> use = trainer.device().memory().memory_use()) {
    mine[kHasDeviceMemory] = 1.0;
    mine[kAllocatorPeak] = static_cast<double>(use->allocator_peak_in_use_bytes);
    mine[kAllocatorReserved] = static_cast<double>(use->allocator_reserved_bytes);
    mine[kDriverUsed] = static_cast<double>(use->driver_used_bytes);
  }
  for (const StepResult& s : record.steps) {
    mine[kTransfersPerStep] += static_cast<double>(s.host_transfers.count()) / steps;
    mine[kTransferBytesPerStep] += static_cast<double>(s.host_transfers.bytes) / steps;
    for (const HostTransferPurpose purpose : kHostTransferPurposes) {
      mine[kTransfersByPurposePerStep + static_cast<int>(purpose)] +=
          static_cast<double>(s.host_transfers.count_of(purpose)) / steps;
    }
  }
  // Over the measured steps: the warm-up's are where the recordings are made.
  const auto measured_count = static_cast<double>(measured.size());
  for (const StepResult* s : measured) {
    if (!s->recorded_calls) continue;
    mine[kHasRecordedCalls] = 1.0;
    mine[kRecordedPerStep] += static_cast<double>(s->recorded_calls->recorded) / measured_count;
    mine[kReplayedPerStep] += static_cast<double>(s->recorded_calls->replayed) / measured_count;
    mine[kDirectPerStep] += static_cast<double>(s->recorded_calls->direct) / measured_count;
  }
  // The instructions the host waited in: a count per step, and where in the last measured step.
  std::vector<int> waited_in_last_step;
  for (const StepResult* s : measured) {
    if (!s->host_wait_instructions) continue;
    mine[kHasHostWaits] = 1.0;
    mine[kHostWaitInstructionsPerStep] += static_cast<double>(s->host_wait_instructions->size()) / measured_count;
    waited_in_last_step = *s->host_wait_instructions;
  }
  const int ranks = plan.mesh.rank_count();
  const MPI_Comm world = trainer.communicator().communicators().world();
  std::vector<double> all(static_cast<size_t>(ranks * kFields));
  SB_MPI_CHECK(MPI_Gather(mine.data(), kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, world));
  const std::vector<std::vector<int>> waited_in = gather_int_lists(waited_in_last_step, ranks, world);

  nlohmann::ordered_json rank_list = nlohmann::ordered_json::array();
  for (int r = 0; r < ranks; ++r) {
    const double* f = all.data() + static_cast<size_t>(r * kFields);
    auto bytes = [](double v) { return static_cast<int64_t>(v); };
    nlohmann::ordered_json entry = {
        {"rank", r},
        {"peak_memory_bytes", bytes(f[kPeak])},
        {"memory",
         {{"params", bytes(f[kParams])},
          {"grads", bytes(f[kGrads])},
          {"optimizer", bytes(f[kOptimizer])},
          {"activations", bytes(f[kActivations])},
          {"buffers", bytes(f[kBuffers])}}},
        {"peak_rss_bytes", bytes(f[kRss])},
        {"comm_bytes_sent", bytes(f[kBytesPerStep])},
        {"host_transfers_per_step", {{"count", f[kTransfersPerStep]}, {"bytes", bytes(f[kTransferBytesPerStep])}}}};
    nlohmann::ordered_json& by_purpose = entry["host_transfers_per_step"]["by_purpose"];
    for (const HostTransferPurpose purpose : kHostTransferPurposes) {
      by_purpose[std::string(host_transfer_purpose_name(purpose))] =
          f[kTransfersByPurposePerStep + static_cast<int>(purpose)];
    }
    // Only where every count was split (Communicator::set_rank_hosts), never a partial split.
    if (f[kSplitByHost] > 0.5) {
      entry["comm_bytes_sent_per_host_level"] = {
          {comm::host_level_name(comm::HostLevel::within_host), bytes(f[kWithinHostBytesPerStep])},
          {comm::host_level_name(comm::HostLevel::across_hosts), bytes(f[kAcrossHostsBytesPerStep])}};
    }
    if (f[kHasDeviceMemory] > 0.5) {
      entry["device_memory"] = {{"allocator_peak_in_use_bytes", bytes(f[kAllocatorPeak])},
                                {"allocator_reserved_bytes", bytes(f[kAllocatorReserved])},
                                {"driver_used_bytes", bytes(f[kDriverUsed])}};
    }
    if (f[kHasRecordedCalls] > 0.5) {
      entry["kernel_graphs_per_step"] = {
          {"recorded", f[kRecordedPerStep]}, {"replayed", f[kReplayedPerStep]}, {"direct", f[kDirectPerStep]}};
    }
    if (f[kHasHostWaits] > 0.5) {
      entry["host_waits_per_step"] = {{"instructions", f[kHostWaitInstructionsPerStep]},
                                      {"at", waited_in.at(static_cast<size_t>(r))}};
    }
    if (static_cast<size_t>(r) < record.placement.size()) {
      const comm::RankPlacement& placed = record.placement[static_cast<size_t>(r)];
      entry["placement"] = {{"host", placed.host}, {"cpus", placed.cpus}, {"by", comm::placed_by_name(placed.by)}};
    }
    rank_list.push_back(std::move(entry));
  }
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const auto& [key, count] : record.bytes.entries()) {
    collectives.push_back({{"label", key.first},
                           {"kind", plans::collective_name(key.second)},
                           {"bytes", steps > 0 ? count.bytes / steps : 0},
                           {"calls", steps > 0 ? count.calls / steps : 0}});
  }
  nlohmann::ordered_json losses = nlohmann::ordered_json::array();
  for (const StepResult& s : record.steps) losses.push_back(s.loss);
  // Not rank 0's own time: ranks that share cores and never wait for each other each time only
  // their own turn on the core.
  const double iteration = median_step_span_seconds(measured, record.placement, world);
  const double forward = median_of(&StepSeconds::compute_forward);
  const double backward = median_of(&StepSeconds::compute_backward);
  const double exposed = median_of(&StepSeconds::communication) + median_of(&StepSeconds::gradient_sync);
  const double optimizer = median_of(&StepSeconds::optimizer);
  // A stage of a pipeline also waits for the others (its hand-overs, and the gradients of its
  // micro-batches that come back when the later stages are done): the step's time no phase
  // accounts for, as the prediction's bubble is (StepSeconds::stage_waiting is in it). Without a
  // pipeline that remainder is the runtime's own bookkeeping.
  const double bubble =
      plan.stage_count() > 1 ? std::max(0.0, iteration - forward - backward - exposed - optimizer) : 0.0;
  nlohmann::ordered_json mesh = nlohmann::ordered_json::object();
  for (const plans::MeshAxis& axis : plan.mesh.axes()) mesh[axis.name] = axis.size;
  return {{"format", "splitbrain-measurement"},
          {"version", 1},
          {"family", plan.family},
          {"model", plan.model_spec},
          {"batch", plan.global_batch},
          {"micro_batches", plan.micro_batches},
          {"dtype", model::dtype_name(plan.dtype)},
          {"backend", trainer.backend_name()},
          {"tf32", trainer.backend_tf32()},
          {"mesh", mesh},
          {"steps", steps},
          {"warmup_steps", record.warmup},
          {"iteration_seconds", iteration},
          {"samples_per_second", iteration > 0 ? static_cast<double>(plan.global_batch) / iteration : 0.0},
          {"phases",
           {{"compute_forward", forward},
            {"compute_backward", backward},
            {"comm_exposed", exposed},
            {"bubble", bubble},
            {"optimizer", optimizer}}},
          {"ranks", rank_list},
          {"collectives", collectives},
          {"losses", losses}};
}

}  // namespace splitbrain::exec
