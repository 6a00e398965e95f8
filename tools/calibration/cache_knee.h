#pragma once
// How much data a CPU keeps in its caches between two reads of it, read off a measured curve of
// read rate against working set (tools/calibration/cache_probe.h measures it). The simulator takes
// it as the last-level cache a step's data shares (sim::caches_warm_fraction): on a virtual
// machine the cache the guest sees described (sysfs, sysconf) is its socket's or its slice's, a
// share of which other guests' cores use, or is not described at all.

#include <span>

namespace splitbrain::tools {

struct ReadRate {
  double working_set_bytes = 0.0;
  double bytes_per_second = 0.0;
};

// `rates` in increasing working set, the last one far larger than any cache (the memory's rate).
// Returns the working set at which the read rate, past the fastest point, first falls to the
// geometric mean of the fastest rate and the memory's, interpolated on log scales between the two
// measured working sets around it. 0 where the fastest rate is less than 1.25x the memory's (no
// cache to tell apart) or fewer than two rates are given.
double cache_bytes_from_read_rates(std::span<const ReadRate> rates);

}  // namespace splitbrain::tools
