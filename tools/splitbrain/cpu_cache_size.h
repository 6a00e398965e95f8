#pragma once
// The largest cache of this rank's first CPU as Linux describes it (sysfs), in bytes; 0 where it
// does not. Not sysconf's: in a virtual machine that reports the host socket's whole L3 (256 MB
// where the guest's CPUs share one 32 MB slice of it).

namespace splitbrain::tools {

double cpu_last_level_cache_bytes();

}  // namespace splitbrain::tools
