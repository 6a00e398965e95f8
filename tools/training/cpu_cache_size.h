#pragma once
// The largest cache of this rank's first CPU as Linux describes it (sysfs), in bytes; 0 where it
// does not. Not sysconf's: in a virtual machine that reports the host socket's whole L3 (256 MB
// where the guest's CPUs share one 32 MB slice of it).

#include <cstddef>
#include <vector>

namespace splitbrain::tools {

double cpu_last_level_cache_bytes();

// Bytes to write to push a kernel's data out of the caches before it is timed: twice the cache
// the CPU describes, at least 32 MiB (where it describes none: the L3 slice of the EPYCs we ran
// on) and at most 256 MiB. The cap is for virtual machines that describe a whole socket's L3:
// a 2-vCPU Xeon guest describes 480 MiB, yet its reads run at the memory's rate from 128-256 MiB
// (the working sets calibrate's cache probe reads), and a 960 MiB sweep before every timed run
// took most of a calibration's minutes.
double cache_eviction_sweep_bytes(double described_cache_bytes);

// Training runs each layer once per step on data the layers before it pushed out of the cache;
// timing a kernel again and again on hot data would credit it with a rate training never sees.
// Writing a buffer larger than this core's caches before each timed run puts the kernel back in
// training's conditions (cache_eviction_sweep_bytes says how large a buffer).
inline void evict_caches() {
  static std::vector<char> sweep(static_cast<size_t>(cache_eviction_sweep_bytes(cpu_last_level_cache_bytes())));
  for (size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<char>(sweep[i] + 1);
}

}  // namespace splitbrain::tools
