#pragma once
// Launch shape of the own kernels (.cu files only): 256 threads a block, grid-stride loops, and
// at most 4096 blocks (enough to fill an H100's 132 SMs many times; larger tensors loop).

#include <algorithm>
#include <cstdint>

namespace splitbrain::exec::cuda {

constexpr int kThreadsPerBlock = 256;

inline unsigned blocks_for(int64_t elements) {
  const int64_t blocks = (elements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 4096));
}

// One block per group (row, channel) up to the grid's 65535 limit; larger counts loop.
inline unsigned blocks_for_groups(int64_t groups) {
  return static_cast<unsigned>(std::clamp<int64_t>(groups, 1, 65535));
}

}  // namespace splitbrain::exec::cuda

// The grid-stride loop over [0, n) of the kernels launched with blocks_for(n).
#define SB_GRID_STRIDE_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)
