#pragma once
// Own max and average pooling kernels (NCHW, fp32): per-side padding and ceil_mode as the
// shape says, with no padded copy. Device pointers; queued on `stream`.
//
// Max pooling's forward records, per output element, which element of its window won (row-major
// position in the window, the first of equal maxima; padding never wins), and its backward
// routes dy to that element alone. Average pooling counts the padded zeros (the divisor is the
// whole window: windows overhanging the padding are refused before they get here). Both
// backwards gather, one thread per input element, over the windows that hold it: no atomics,
// so overlapping windows sum in a fixed order.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

struct PoolGeometry {
  int64_t planes = 1;  // batch x channels
  int64_t height = 1;
  int64_t width = 1;
  int64_t out_height = 1;
  int64_t out_width = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_top = 0;
  int64_t pad_left = 0;
};

// `index_bytes` (1 or 4, model/max_pool_index.h) is the width of each record in `winners`.
void max_pool_forward(cudaStream_t stream, const PoolGeometry& g, const float* x, float* y, void* winners,
                      int index_bytes);
void max_pool_backward(cudaStream_t stream, const PoolGeometry& g, const float* dy, const void* winners,
                       int index_bytes, float* dx);
void average_pool_forward(cudaStream_t stream, const PoolGeometry& g, const float* x, float* y);
void average_pool_backward(cudaStream_t stream, const PoolGeometry& g, const float* dy, float* dx);

}  // namespace splitbrain::exec::cuda
