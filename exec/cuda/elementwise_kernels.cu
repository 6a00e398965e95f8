#include "exec/cuda/elementwise_kernels.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/grid.h"
#include "exec/kernels/dropout_mask.h"

namespace splitbrain::exec::cuda {

namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

__global__ void fill_kernel(int64_t n, float value, float* y) {
  SB_GRID_STRIDE_LOOP(i, n) { y[i] = value; }
}

__global__ void gelu_forward_kernel(int64_t n, const float* x, float* y) {
  SB_GRID_STRIDE_LOOP(i, n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v)));
  }
}

__global__ void gelu_backward_kernel(int64_t n, const float* x, const float* dy, float* dx) {
  SB_GRID_STRIDE_LOOP(i, n) {
    const float v = x[i];
    const float t = tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    const float inner_slope = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * inner_slope);
  }
}

__global__ void dropout_forward_kernel(DropoutGeometry g, int64_t n, uint64_t key, uint64_t threshold, float scale,
                                       const float* x, float* y, uint8_t* mask) {
  SB_GRID_STRIDE_LOOP(i, n) {
    // Local row-major index -> local coordinates -> global row-major index.
    int64_t rest = i, global = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t coordinate = rest % g.local_shape[d];
      rest /= g.local_shape[d];
      global += (g.offset[d] + coordinate) * g.global_stride[d];
    }
    const bool keep = kernels::dropout_kept(key, threshold, static_cast<uint64_t>(global));
    mask[i] = keep ? 1 : 0;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
}

__global__ void dropout_backward_kernel(int64_t n, const uint8_t* mask, float scale, const float* dy, float* dx) {
  SB_GRID_STRIDE_LOOP(i, n) { dx[i] = mask[i] ? dy[i] * scale : 0.0f; }
}

// One thread per row for the loss (one read), one per element for exp.
__global__ void row_loss_kernel(int64_t rows, int64_t classes, const int32_t* labels, const float* log_probs,
                                double* row_loss) {
  SB_GRID_STRIDE_LOOP(r, rows) { row_loss[r] = -static_cast<double>(log_probs[r * classes + labels[r]]); }
}

__global__ void exp_kernel(int64_t n, float* values) {
  SB_GRID_STRIDE_LOOP(i, n) { values[i] = expf(values[i]); }
}

// One block of kSumThreads: thread t adds rows t, t + kSumThreads, ... in turn, then the block
// adds the threads' sums pairwise. The order depends on `rows` alone, so a run repeats its sums.
constexpr int kSumThreads = 256;

__global__ void sum_rows_kernel(int64_t rows, const double* row_loss, double scale, double* loss, float* loss_float,
                                int64_t floats) {
  __shared__ double partial[kSumThreads];
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += kSumThreads) sum += row_loss[r];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const double total = partial[0] * scale;
  if (threadIdx.x == 0) *loss = total;
  for (int64_t i = threadIdx.x; i < floats; i += kSumThreads) loss_float[i] = static_cast<float>(total);
}

__global__ void cross_entropy_grad_kernel(int64_t rows, int64_t classes, const float* probs, const int32_t* labels,
                                          float scale, float* dlogits) {
  SB_GRID_STRIDE_LOOP(i, rows * classes) {
    const int64_t r = i / classes, c = i % classes;
    // As the CPU: p * scale, then minus scale at the label (not (p - 1) * scale: other rounding).
    const float d = probs[i] * scale;
    dlogits[i] = c == labels[r] ? d - scale : d;
  }
}

}  // namespace

void fill_on_device(cudaStream_t stream, int64_t elements, float value, float* y) {
  if (elements <= 0) return;
  fill_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(elements, value, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void gelu_tanh_forward(cudaStream_t stream, int64_t elements, const float* x, float* y) {
  gelu_forward_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(elements, x, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void gelu_tanh_backward(cudaStream_t stream, int64_t elements, const float* x, const float* dy, float* dx) {
  gelu_backward_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(elements, x, dy, dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

void dropout_forward_on_device(cudaStream_t stream, const DropoutGeometry& geometry, int64_t elements,
                               uint64_t stream_key, uint64_t threshold, float scale, const float* x, float* y,
                               uint8_t* mask) {
  dropout_forward_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(geometry, elements, stream_key,
                                                                                threshold, scale, x, y, mask);
  SB_CUDA_CHECK(cudaGetLastError());
}

void dropout_backward_on_device(cudaStream_t stream, int64_t elements, const uint8_t* mask, float scale,
                                const float* dy, float* dx) {
  dropout_backward_kernel<<<blocks_for(elements), kThreadsPerBlock, 0, stream>>>(elements, mask, scale, dy, dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

void softmax_from_log_with_loss(cudaStream_t stream, int64_t rows, int64_t classes, const int32_t* labels,
                                float* log_probs_to_probs, double* row_loss) {
  row_loss_kernel<<<blocks_for(rows), kThreadsPerBlock, 0, stream>>>(rows, classes, labels, log_probs_to_probs,
                                                                     row_loss);
  SB_CUDA_CHECK(cudaGetLastError());
  exp_kernel<<<blocks_for(rows * classes), kThreadsPerBlock, 0, stream>>>(rows * classes, log_probs_to_probs);
  SB_CUDA_CHECK(cudaGetLastError());
}

void sum_row_losses(cudaStream_t stream, int64_t rows, const double* row_loss, double scale, double* loss,
                    float* loss_float, int64_t floats) {
  sum_rows_kernel<<<1, kSumThreads, 0, stream>>>(rows, row_loss, scale, loss, loss_float, floats);
  SB_CUDA_CHECK(cudaGetLastError());
}

void softmax_cross_entropy_grad(cudaStream_t stream, int64_t rows, int64_t classes, const float* probs,
                                const int32_t* labels, float scale, float* dlogits) {
  cross_entropy_grad_kernel<<<blocks_for(rows * classes), kThreadsPerBlock, 0, stream>>>(rows, classes, probs, labels,
                                                                                         scale, dlogits);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
