#pragma once
// Which all-reduce algorithm one call of `bytes` runs on the MPI executor, for the executor to
// request it (exec/comm/collective_algorithms.h, where the measurements behind the split are) and
// for the simulator to price the same rounds (sim's `by_size` algorithm). One decision, two readers.

#include <cstdint>

namespace splitbrain::plans {

enum class AllReduceAlgorithm {
  recursive_doubling,  // log2 n rounds, each swapping the whole buffer with the partner at distance 1, 2, 4, ...
  rabenseifner,        // reduce-scatter by recursive halving (distance 1 first, half the buffer), then all-gather back
};

// Buffers up to this size are latency-bound on every link measured: they take recursive doubling.
inline constexpr int64_t kRecursiveDoublingMaxBytes = int64_t{64} << 10;

// The algorithm for an all-reduce of `bytes`.
constexpr AllReduceAlgorithm all_reduce_algorithm(int64_t bytes) {
  return bytes <= kRecursiveDoublingMaxBytes ? AllReduceAlgorithm::recursive_doubling
                                             : AllReduceAlgorithm::rabenseifner;
}

}  // namespace splitbrain::plans
