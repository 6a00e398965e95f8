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

// The help text of --no-bind, the same for every command that has it.
inline constexpr const char* kNoBindHelp =
    "Leave ranks unbound when the launcher did not bind them. By default splitbrain then pins each rank to its own "
    "share of the node's CPUs (mpirun --bind-to core and other launcher bindings are always kept)";

}  // namespace splitbrain::tools
