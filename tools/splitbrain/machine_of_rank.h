#pragma once
// Which machine each rank runs on, as the kernels see it: ranks with one kernel share its caches,
// memory and cores whatever their host names say (tools/emulate-nodes.sh gives each emulated
// node a host of its own on one machine).

#include <mpi.h>

#include <string>
#include <vector>

namespace splitbrain::tools {

// Per world rank of `comm`, an identifier of its machine: the running kernel's boot id
// (/proc/sys/kernel/random/boot_id, the same in every namespace), or the rank's host name from
// `host_of_rank` where that cannot be read. Collective over `comm`.
std::vector<std::string> machine_of_rank(MPI_Comm comm, const std::vector<std::string>& host_of_rank);

}  // namespace splitbrain::tools
