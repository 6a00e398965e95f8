#pragma once
// The measured report of a run, in the prediction's vocabulary so `compare` can line them up:
//   iteration_seconds and samples_per_second (medians over the measured steps),
//   phases {compute_forward, compute_backward, comm_exposed, bubble, optimizer} (medians, rank 0),
//   ranks [{rank, peak_memory_bytes, memory {params, grads, optimizer, activations, buffers},
//           peak_rss_bytes, comm_bytes_sent (per step),
//           comm_bytes_sent_per_host_level {within_host, across_hosts} (per step; comm_bytes_sent
//             split by where each message goes, comm/host_level.h; only when the ranks' hosts
//             were given to the Communicator),
//           host_transfers_per_step {count, bytes, by_purpose {input, labels, loss, other}} (means
//             over every step; exec/runtime/host_transfers.h: a GPU's input batch, labels and loss,
//             and `other` for what else went through the host),
//           device_memory {allocator_peak_in_use_bytes, allocator_reserved_bytes,
//             driver_used_bytes} (DeviceMemory::memory_use, where the device has an allocator: a GPU),
//           kernel_graphs_per_step {recorded, replayed, direct} (DeviceKernels::recorded_calls, means over
//             the measured steps, where the device records its kernels' calls: a GPU's CUDA graphs),
//           host_waits_per_step {instructions (mean over the measured steps), at [the step program's
//             instructions of the last one]}: where the host waited for the device (DeviceClock::host_waits,
//             where the device queues its work: a GPU; the simulator predicts them, sim::StageTiming),
//           placement {host, cpus [...], by: launcher | splitbrain | none} (when recorded)}],
//   collectives [{label, kind, bytes (per step, rank 0)}], losses (every step).

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "exec/comm/byte_counter.h"
#include "exec/comm/rank_placement.h"
#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

struct RunRecord {
  std::vector<StepResult> steps;  // every step, warm-up included
  int warmup = 0;                 // leading steps left out of the timing medians
  comm::ByteCounter bytes;        // counted over all of `steps`
  // Every rank's CPUs (comm::place_ranks gathers them to all ranks); empty: not recorded.
  std::vector<comm::RankPlacement> placement;
};

// The steps the report's medians are over: those after the warm-up.
std::vector<const StepResult*> measured_steps(const RunRecord& record);

// This rank's median seconds per instruction over the measured steps (those after the warm-up; an
// instruction a step lacks counts 0 there), as the report's phases are medians over them. `names`:
// the instructions the steps' seconds_by_instruction are indexed by (Trainer::instruction_names).
InstructionSeconds median_seconds_by_instruction(const RunRecord& record, std::span<const std::string> names);

// Collective over all ranks; the returned document is complete on rank 0 only.
nlohmann::ordered_json gather_run_report(Trainer& trainer, const plans::Plan& plan, const RunRecord& record);

}  // namespace splitbrain::exec
