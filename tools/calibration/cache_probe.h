#pragma once
// `calibrate --model` on a CPU: the cache a step's data shares, measured (cache_knee.h says why
// and how the curve is read).

#include <mpi.h>

namespace splitbrain::tools {

// The first rank of each host reads working sets of 2 MiB to 256 MiB, each read once to bring it
// in and once timed, over several passes (a shared host's slow spells last longer than one
// working set's reads), while the host's other ranks sleep; the median rate per working set. The
// smallest cache any host measured (bytes); `described_bytes` (what sysfs says, 0 if nothing)
// where no host's curve tells a cache apart. Collective over `world`; `host` holds this host's
// ranks. Prints the curve where `print`.
double measure_host_cache_bytes(MPI_Comm world, MPI_Comm host, bool print, double described_bytes);

}  // namespace splitbrain::tools
