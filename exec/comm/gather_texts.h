#pragma once
// Host bookkeeping, not a plan's traffic: every rank's text at one rank (reports, traces,
// checkpoint manifests), its bytes uncounted.

#include <mpi.h>

#include <string>
#include <vector>

namespace splitbrain::exec::comm {

// Collective over `communicator`: at its rank 0, rank r's `mine` at [r]; empty elsewhere.
std::vector<std::string> gather_texts(const std::string& mine, MPI_Comm communicator);

}  // namespace splitbrain::exec::comm
