#include "exec/cuda/layout_kernels.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"

namespace splitbrain::exec::cuda {

namespace {

// One thread per padded element: reads x where the element lies inside the placed window.
__global__ void pad_kernel(PlanePadding g, const float* x, float fill, float* padded) {
  const int64_t total = g.planes * g.padded_h * g.padded_w;
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t col = i % g.padded_w - g.left;
    const int64_t row = i / g.padded_w % g.padded_h - g.top;
    const int64_t plane = i / (g.padded_w * g.padded_h);
    const bool inside = row >= 0 && row < g.height && col >= 0 && col < g.width;
    padded[i] = inside ? x[(plane * g.height + row) * g.width + col] : fill;
  }
}

// One thread per element of x.
__global__ void crop_kernel(PlanePadding g, const float* padded, float* x) {
  const int64_t total = g.planes * g.height * g.width;
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t col = i % g.width;
    const int64_t row = i / g.width % g.height;
    const int64_t plane = i / (g.width * g.height);
    x[i] = padded[(plane * g.padded_h + row + g.top) * g.padded_w + col + g.left];
  }
}

}  // namespace

void pad_planes(cudaStream_t stream, const PlanePadding& g, const float* x, float fill, float* padded) {
  pad_kernel<<<blocks_for(g.planes * g.padded_h * g.padded_w), kThreadsPerBlock, 0, stream>>>(g, x, fill, padded);
  SB_CUDA_CHECK(cudaGetLastError());
}

void crop_planes(cudaStream_t stream, const PlanePadding& g, const float* padded, float* x) {
  crop_kernel<<<blocks_for(g.planes * g.height * g.width), kThreadsPerBlock, 0, stream>>>(g, padded, x);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
