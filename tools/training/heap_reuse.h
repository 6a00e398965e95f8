#pragma once
// Training allocates and frees the same activation, gradient and message arrays every step.
// glibc hands large freed blocks back to the kernel and faults every page in again on the next
// allocation (about 18,000 page faults per vgg11-cifar10 step on one rank here, 500 with this;
// and an 8 MiB all-reduce 5x slower); kept in the heap and never trimmed, they are reused as a
// caching allocator would reuse them. `run` and `calibrate` both set this, so calibration
// measures what training gets.

namespace splitbrain::tools {

void keep_freed_memory_for_reuse();

}  // namespace splitbrain::tools
