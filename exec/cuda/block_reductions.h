#pragma once
// Reductions inside a thread block for the own kernels (.cu files only; launched with
// kThreadsPerBlock threads, grid.h): a sum over the block, and the tiling of column sums down
// many rows that the normalisations' parameter gradients use.

#include "exec/cuda/grid.h"

namespace splitbrain::exec::cuda {

constexpr int kWarp = 32;

// The sum of `value` over the block, returned to every thread. `shared` holds one partial per
// warp (kThreadsPerBlock / kWarp of them); the leading barrier lets a loop call this again while
// others still read the last result.
template <typename T>
__device__ T block_sum(T value, T* shared) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  __syncthreads();
  if (threadIdx.x % kWarp == 0) shared[threadIdx.x / kWarp] = value;
  __syncthreads();
  T total = 0;
  for (unsigned w = 0; w < (blockDim.x + kWarp - 1) / kWarp; ++w) total += shared[w];
  return total;
}

// Column sums down the rows: a block takes kFeatureTile features (threadIdx.x, coalesced reads)
// and splits the rows among kRowLanes lanes (threadIdx.y), whose partial sums meet in shared
// memory; so even a few hundred features keep thousands of threads busy.
constexpr int kFeatureTile = 32;
constexpr int kRowLanes = kThreadsPerBlock / kFeatureTile;

}  // namespace splitbrain::exec::cuda
