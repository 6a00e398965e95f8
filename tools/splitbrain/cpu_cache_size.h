#pragma once
// The largest cache of this rank's first CPU as Linux describes it (sysfs), in bytes; 0 where it
// does not. Not sysconf's: in a virtual machine that reports the host socket's whole L3 (256 MB
// where the guest's CPUs share one 32 MB slice of it).

namespace splitbrain::tools {

double cpu_last_level_cache_bytes();

// Bytes to write to push a kernel's data out of the caches before it is timed: twice the cache
// the CPU describes, at least 32 MiB (where it describes none: the L3 slice of the EPYCs we ran
// on) and at most 256 MiB. The cap is for virtual machines that describe a whole socket's L3:
// a 2-vCPU Xeon guest describes 480 MiB, yet its reads run at the memory's rate from 128-256 MiB
// (the working sets calibrate's cache probe reads), and a 960 MiB sweep before every timed run
// took most of a calibration's minutes.
double cache_eviction_sweep_bytes(double described_cache_bytes);

}  // namespace splitbrain::tools
