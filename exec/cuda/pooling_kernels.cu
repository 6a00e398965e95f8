#include "exec/cuda/pooling_kernels.h"

#include <cuda/std/limits>
#include <stdexcept>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"

namespace splitbrain::exec::cuda {

namespace {

// The outputs whose windows hold padded row `p` (an input row plus the leading padding) along
// one axis: [first, last], empty when first > last.
struct WindowRange {
  int64_t first;
  int64_t last;
};

__device__ WindowRange windows_holding(int64_t p, int64_t kernel, int64_t stride, int64_t outputs) {
  const int64_t first = p < kernel ? 0 : (p - kernel) / stride + 1;
  const int64_t last = p / stride < outputs - 1 ? p / stride : outputs - 1;
  return {first, last};
}

// Element i of `planes` planes of rows x cols, row-major.
struct Position {
  int64_t plane;
  int64_t row;
  int64_t col;
};

__device__ Position position_of(int64_t i, int64_t rows, int64_t cols) {
  return {i / (rows * cols), i / cols % rows, i % cols};
}

// Calls visit(position in the window, value) for each input element of output element o's window
// (padding skipped), row-major.
template <typename Visit>
__device__ void for_each_in_window(const PoolGeometry& g, const float* x, int64_t o, Visit&& visit) {
  const Position out = position_of(o, g.out_height, g.out_width);
  const int64_t top = out.row * g.stride_h - g.pad_top;
  const int64_t left = out.col * g.stride_w - g.pad_left;
  const float* in = x + out.plane * g.height * g.width;
  for (int64_t r = 0; r < g.kernel_h; ++r) {
    const int64_t h = top + r;
    if (h < 0 || h >= g.height) continue;
    for (int64_t c = 0; c < g.kernel_w; ++c) {
      const int64_t w = left + c;
      if (w >= 0 && w < g.width) visit(r * g.kernel_w + c, in[h * g.width + w]);
    }
  }
}

// The sum of take(output element, position of input element i in its window) over the windows
// that hold input element i, in a fixed order.
template <typename Take>
__device__ float gather_windows(const PoolGeometry& g, int64_t i, Take&& take) {
  const Position in = position_of(i, g.height, g.width);
  const WindowRange rows = windows_holding(in.row + g.pad_top, g.kernel_h, g.stride_h, g.out_height);
  const WindowRange cols = windows_holding(in.col + g.pad_left, g.kernel_w, g.stride_w, g.out_width);
  float sum = 0.0f;
  for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
    for (int64_t ow = cols.first; ow <= cols.last; ++ow) {
      const int64_t o = (in.plane * g.out_height + oh) * g.out_width + ow;
      const int64_t at = (in.row + g.pad_top - oh * g.stride_h) * g.kernel_w + (in.col + g.pad_left - ow * g.stride_w);
      sum += take(o, at);
    }
  }
  return sum;
}

template <typename Index>
__global__ void max_forward_kernel(PoolGeometry g, const float* x, float* y, Index* winners) {
  SB_GRID_STRIDE_LOOP(o, g.planes * g.out_height * g.out_width) {
    float best = -::cuda::std::numeric_limits<float>::infinity();
    int64_t best_at = 0;
    for_each_in_window(g, x, o, [&](int64_t at, float value) {
      if (value > best) {
        best = value;
        best_at = at;
      }
    });
    y[o] = best;
    winners[o] = static_cast<Index>(best_at);
  }
}

template <typename Index>
__global__ void max_backward_kernel(PoolGeometry g, const float* dy, const Index* winners, float* dx) {
  SB_GRID_STRIDE_LOOP(i, g.planes * g.height * g.width) {
    dx[i] = gather_windows(
        g, i, [&](int64_t o, int64_t at) { return static_cast<int64_t>(winners[o]) == at ? dy[o] : 0.0f; });
  }
}

__global__ void average_forward_kernel(PoolGeometry g, const float* x, float* y) {
  const float window = static_cast<float>(g.kernel_h * g.kernel_w);
  SB_GRID_STRIDE_LOOP(o, g.planes * g.out_height * g.out_width) {
    float sum = 0.0f;
    for_each_in_window(g, x, o, [&](int64_t, float value) { sum += value; });
    y[o] = sum / window;
  }
}

__global__ void average_backward_kernel(PoolGeometry g, const float* dy, float* dx) {
  const float window = static_cast<float>(g.kernel_h * g.kernel_w);
  SB_GRID_STRIDE_LOOP(i, g.planes * g.height * g.width) {
    dx[i] = gather_windows(g, i, [&](int64_t o, int64_t) { return dy[o]; }) / window;
  }
}

void require_index_bytes(int index_bytes) {
  if (index_bytes != 1 && index_bytes != 4) throw std::logic_error("max pooling: a winner record is 1 or 4 bytes");
}

}  // namespace

void max_pool_forward(cudaStream_t stream, const PoolGeometry& g, const float* x, float* y, void* winners,
                      int index_bytes) {
  require_index_bytes(index_bytes);
  const unsigned blocks = blocks_for(g.planes * g.out_height * g.out_width);
  if (index_bytes == 1)
    max_forward_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g, x, y, static_cast<uint8_t*>(winners));
  else
    max_forward_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g, x, y, static_cast<int32_t*>(winners));
  SB_CUDA_CHECK(cudaGetLastError());
}

void max_pool_backward(cudaStream_t stream, const PoolGeometry& g, const float* dy, const void* winners,
                       int index_bytes, float* dx) {
  require_index_bytes(index_bytes);
  const unsigned blocks = blocks_for(g.planes * g.height * g.width);
  if (index_bytes == 1)
    max_backward_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g, dy, static_cast<const uint8_t*>(winners), dx);
  else
    max_backward_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(g, dy, static_cast<const int32_t*>(winners), dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

void average_pool_forward(cudaStream_t stream, const PoolGeometry& g, const float* x, float* y) {
  average_forward_kernel<<<blocks_for(g.planes * g.out_height * g.out_width), kThreadsPerBlock, 0, stream>>>(g, x, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void average_pool_backward(cudaStream_t stream, const PoolGeometry& g, const float* dy, float* dx) {
  average_backward_kernel<<<blocks_for(g.planes * g.height * g.width), kThreadsPerBlock, 0, stream>>>(g, dy, dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
