#pragma once
// The commands that start MPI (`run`, `calibrate`) place their ranks first (see
// exec/comm/rank_placement.h) and say where they put them: world rank 0 prints
// "[TAG] placement: rank 0 cpus 0, rank 1 cpus 1 (pinned by splitbrain)" and one
// "[TAG] warning: ..." line per warning (standard error). Collective over MPI_COMM_WORLD; call it right after MPI
// init, before any compute thread starts.

#include <string>

#include "exec/comm/rank_placement.h"

namespace splitbrain::tools {

// `pin`: false for --no-bind (ranks the launcher left unbound stay unbound).
exec::comm::JobPlacement place_and_announce(bool pin, const std::string& tag);

// On a GPU, once the rank's helper threads exist (after the first step: the batch prefetcher, the
// watchdog, what CUDA, cuDNN and NCCL start on first use): the thread that drives the GPU alone on
// one of the rank's CPUs, the others on the rest (exec/comm/driver_thread_cpu.h). `say`: print
// where, as "[TAG] ...".
void give_driver_its_own_cpu(const std::string& tag, bool say);

// The help text of --no-bind, the same for every command that has it.
inline constexpr const char* kNoBindHelp =
    "Leave ranks unbound when the launcher did not bind them. By default splitbrain then pins each rank to its own "
    "share of the node's CPUs, and on a GPU gives the thread that drives it one of them alone (mpirun --bind-to core "
    "and "
    "other launcher bindings are always kept)";

}  // namespace splitbrain::tools
