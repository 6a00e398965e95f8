#pragma once
// Launch shape of the own elementwise kernels: 256 threads a block, grid-stride loops, and at
// most 4096 blocks (enough to fill an H100's 132 SMs many times; larger tensors loop).

#include <algorithm>
#include <cstdint>

namespace splitbrain::exec::cuda {

constexpr int kThreadsPerBlock = 256;

inline unsigned blocks_for(int64_t elements) {
  const int64_t blocks = (elements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 4096));
}

}  // namespace splitbrain::exec::cuda
