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

template <typename Index>
__global__ void max_forward_kernel(PoolGeometry g, const float* x, float* y, Index* winners) {
  const int64_t total = g.planes * g.out_height * g.out_width;
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t ow = i % g.out_width;
    const int64_t oh = i / g.out_width % g.out_height;
    const int64_t plane = i / (g.out_width * g.out_height);
    const int64_t top = oh * g.stride_h - g.pad_top;
    const int64_t left = ow * g.stride_w - g.pad_left;
    const float* in = x + plane * g.height * g.width;
    float best = -::cuda::std::numeric_limits<float>::infinity();
    int64_t best_at = 0;
    for (int64_t r = 0; r < g.kernel_h; ++r) {
      const int64_t h = top + r;
      if (h < 0 || h >= g.height) continue;
      for (int64_t c = 0; c < g.kernel_w; ++c) {
        const int64_t w = left + c;
        if (w < 0 || w >= g.width) continue;
        const float v = in[h * g.width + w];
        if (v > best) {
          best = v;
          best_at = r * g.kernel_w + c;
        }
      }
    }
    y[i] = best;
    winners[i] = static_cast<Index>(best_at);
  }
}

template <typename Index>
__global__ void max_backward_kernel(PoolGeometry g, const float* dy, const Index* winners, float* dx) {
  const int64_t total = g.planes * g.height * g.width;
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t w = i % g.width;
    const int64_t h = i / g.width % g.height;
    const int64_t plane = i / (g.width * g.height);
    const WindowRange rows = windows_holding(h + g.pad_top, g.kernel_h, g.stride_h, g.out_height);
    const WindowRange cols = windows_holding(w + g.pad_left, g.kernel_w, g.stride_w, g.out_width);
    float sum = 0.0f;
    for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
      for (int64_t ow = cols.first; ow <= cols.last; ++ow) {
        const int64_t o = (plane * g.out_height + oh) * g.out_width + ow;
        const int64_t at = (h + g.pad_top - oh * g.stride_h) * g.kernel_w + (w + g.pad_left - ow * g.stride_w);
        if (static_cast<int64_t>(winners[o]) == at) sum += dy[o];
      }
    }
    dx[i] = sum;
  }
}

__global__ void average_forward_kernel(PoolGeometry g, const float* x, float* y) {
  const int64_t total = g.planes * g.out_height * g.out_width;
  const float window = static_cast<float>(g.kernel_h * g.kernel_w);
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t ow = i % g.out_width;
    const int64_t oh = i / g.out_width % g.out_height;
    const int64_t plane = i / (g.out_width * g.out_height);
    const int64_t top = oh * g.stride_h - g.pad_top;
    const int64_t left = ow * g.stride_w - g.pad_left;
    const float* in = x + plane * g.height * g.width;
    float sum = 0.0f;
    for (int64_t r = 0; r < g.kernel_h; ++r) {
      const int64_t h = top + r;
      if (h < 0 || h >= g.height) continue;
      for (int64_t c = 0; c < g.kernel_w; ++c) {
        const int64_t w = left + c;
        if (w >= 0 && w < g.width) sum += in[h * g.width + w];
      }
    }
    y[i] = sum / window;
  }
}

__global__ void average_backward_kernel(PoolGeometry g, const float* dy, float* dx) {
  const int64_t total = g.planes * g.height * g.width;
  const float window = static_cast<float>(g.kernel_h * g.kernel_w);
  SB_GRID_STRIDE_LOOP(i, total) {
    const int64_t w = i % g.width;
    const int64_t h = i / g.width % g.height;
    const int64_t plane = i / (g.width * g.height);
    const WindowRange rows = windows_holding(h + g.pad_top, g.kernel_h, g.stride_h, g.out_height);
    const WindowRange cols = windows_holding(w + g.pad_left, g.kernel_w, g.stride_w, g.out_width);
    float sum = 0.0f;
    for (int64_t oh = rows.first; oh <= rows.last; ++oh) {
      for (int64_t ow = cols.first; ow <= cols.last; ++ow) sum += dy[(plane * g.out_height + oh) * g.out_width + ow];
    }
    dx[i] = sum / window;
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
