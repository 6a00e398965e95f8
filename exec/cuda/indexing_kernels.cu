#include "exec/cuda/indexing_kernels.h"

#include <cuda/std/limits>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"
#include "exec/kernels/adaptive_avgpool.h"

namespace splitbrain::exec::cuda {

namespace {

__device__ bool local_row(const EmbeddingRows& rows, int64_t id) { return id >= rows.row_begin && id < rows.row_end; }

__global__ void embedding_gather_kernel(EmbeddingRows rows, int64_t count, const float* ids, const float* table,
                                        float* y) {
  SB_GRID_STRIDE_LOOP(e, count * rows.dim) {
    const auto id = static_cast<int64_t>(ids[e / rows.dim]);
    y[e] = local_row(rows, id) ? table[(id - rows.row_begin) * rows.dim + e % rows.dim] : 0.0f;
  }
}

__global__ void embedding_scatter_add_kernel(EmbeddingRows rows, int64_t count, const float* ids, const float* dy,
                                             float* dtable) {
  SB_GRID_STRIDE_LOOP(e, count * rows.dim) {
    const auto id = static_cast<int64_t>(ids[e / rows.dim]);
    if (local_row(rows, id)) atomicAdd(&dtable[(id - rows.row_begin) * rows.dim + e % rows.dim], dy[e]);
  }
}

// The CPU's bins: exec/kernels/adaptive_avgpool.h's constexpr bounds, run on the device as they are.
using kernels::adaptive_bin_begin;
using kernels::adaptive_bin_end;

// One thread per output element, summing its bin in the CPU's order.
__global__ void adaptive_avgpool_forward_kernel(AdaptiveBins b, const float* x, float* y) {
  SB_GRID_STRIDE_LOOP(o, b.planes * b.out_height * b.out_width) {
    const int64_t ow = o % b.out_width, oh = o / b.out_width % b.out_height, plane = o / (b.out_width * b.out_height);
    const int64_t h0 = adaptive_bin_begin(oh, b.height, b.out_height);
    const int64_t h1 = adaptive_bin_end(oh, b.height, b.out_height);
    const int64_t w0 = adaptive_bin_begin(ow, b.width, b.out_width);
    const int64_t w1 = adaptive_bin_end(ow, b.width, b.out_width);
    const float* xp = x + plane * b.height * b.width;
    float sum = 0.0f;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) sum += xp[h * b.width + w];
    y[o] = sum * (1.0f / static_cast<float>((h1 - h0) * (w1 - w0)));
  }
}

// The bins along one axis that hold input index `at`: [first, last]. Bin i starts at or before
// `at` iff i <= ((at + 1) * out - 1) / in, and ends after it iff i >= at * out / in.
__device__ int64_t first_bin(int64_t at, int64_t in, int64_t out) { return at * out / in; }
__device__ int64_t last_bin(int64_t at, int64_t in, int64_t out) { return ((at + 1) * out - 1) / in; }

// One thread per input element, gathering from its bins: no atomics, deterministic.
__global__ void adaptive_avgpool_backward_kernel(AdaptiveBins b, const float* dy, float* dx) {
  SB_GRID_STRIDE_LOOP(i, b.planes * b.height * b.width) {
    const int64_t w = i % b.width, h = i / b.width % b.height, plane = i / (b.width * b.height);
    const float* dyp = dy + plane * b.out_height * b.out_width;
    float sum = 0.0f;
    for (int64_t oh = first_bin(h, b.height, b.out_height); oh <= last_bin(h, b.height, b.out_height); ++oh) {
      const int64_t rows =
          adaptive_bin_end(oh, b.height, b.out_height) - adaptive_bin_begin(oh, b.height, b.out_height);
      for (int64_t ow = first_bin(w, b.width, b.out_width); ow <= last_bin(w, b.width, b.out_width); ++ow) {
        const int64_t cols = adaptive_bin_end(ow, b.width, b.out_width) - adaptive_bin_begin(ow, b.width, b.out_width);
        sum += dyp[oh * b.out_width + ow] * (1.0f / static_cast<float>(rows * cols));
      }
    }
    dx[i] = sum;
  }
}

// Dense element d of [batch * heads, seq, head_dim] <-> its place in the fused rows.
__device__ int64_t fused_index(const HeadLayout& l, int64_t parts, int64_t part, int64_t d) {
  const int64_t j = d % l.head_dim, t = d / l.head_dim % l.seq, nh = d / (l.head_dim * l.seq);
  const int64_t n = nh / l.heads, h = nh % l.heads;
  return (n * l.seq + t) * l.heads * parts * l.head_dim + (h * parts + part) * l.head_dim + j;
}

__global__ void unpack_heads_kernel(HeadLayout l, int64_t parts, int64_t part, const float* fused, float* dense) {
  SB_GRID_STRIDE_LOOP(d, l.batch * l.heads * l.seq * l.head_dim) { dense[d] = fused[fused_index(l, parts, part, d)]; }
}

__global__ void pack_heads_kernel(HeadLayout l, int64_t parts, int64_t part, const float* dense, float* fused) {
  SB_GRID_STRIDE_LOOP(d, l.batch * l.heads * l.seq * l.head_dim) { fused[fused_index(l, parts, part, d)] = dense[d]; }
}

__global__ void mask_future_kernel(int64_t matrices, int64_t rows, int64_t seq, int64_t first_row, float* scores) {
  SB_GRID_STRIDE_LOOP(e, matrices * rows * seq) {
    if (e % seq > first_row + e / seq % rows) scores[e] = -::cuda::std::numeric_limits<float>::infinity();
  }
}

}  // namespace

void embedding_gather(cudaStream_t stream, const EmbeddingRows& rows, int64_t count, const float* ids,
                      const float* table, float* y) {
  embedding_gather_kernel<<<blocks_for(count * rows.dim), kThreadsPerBlock, 0, stream>>>(rows, count, ids, table, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void embedding_scatter_add(cudaStream_t stream, const EmbeddingRows& rows, int64_t count, const float* ids,
                           const float* dy, float* dtable) {
  embedding_scatter_add_kernel<<<blocks_for(count * rows.dim), kThreadsPerBlock, 0, stream>>>(rows, count, ids, dy,
                                                                                              dtable);
  SB_CUDA_CHECK(cudaGetLastError());
}

void adaptive_avgpool_forward_on_device(cudaStream_t stream, const AdaptiveBins& bins, const float* x, float* y) {
  adaptive_avgpool_forward_kernel<<<blocks_for(bins.planes * bins.out_height * bins.out_width), kThreadsPerBlock, 0,
                                    stream>>>(bins, x, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void adaptive_avgpool_backward_on_device(cudaStream_t stream, const AdaptiveBins& bins, const float* dy, float* dx) {
  adaptive_avgpool_backward_kernel<<<blocks_for(bins.planes * bins.height * bins.width), kThreadsPerBlock, 0, stream>>>(
      bins, dy, dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

void unpack_heads(cudaStream_t stream, const HeadLayout& layout, int64_t parts, int64_t part, const float* fused,
                  float* dense) {
  const int64_t n = layout.batch * layout.heads * layout.seq * layout.head_dim;
  unpack_heads_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(layout, parts, part, fused, dense);
  SB_CUDA_CHECK(cudaGetLastError());
}

void pack_heads(cudaStream_t stream, const HeadLayout& layout, int64_t parts, int64_t part, const float* dense,
                float* fused) {
  const int64_t n = layout.batch * layout.heads * layout.seq * layout.head_dim;
  pack_heads_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(layout, parts, part, dense, fused);
  SB_CUDA_CHECK(cudaGetLastError());
}

void mask_future(cudaStream_t stream, int64_t matrices, int64_t rows, int64_t seq, int64_t first_row, float* scores) {
  mask_future_kernel<<<blocks_for(matrices * rows * seq), kThreadsPerBlock, 0, stream>>>(matrices, rows, seq, first_row,
                                                                                         scores);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
