#include "exec/cuda/normalization_kernels.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/block_reductions.h"
#include "exec/cuda/grid.h"
#include "exec/kernels/batchnorm_statistics.h"

namespace splitbrain::exec::cuda {

namespace {

// One block per row (grid-stride over rows), threads over the features.
__global__ void layernorm_forward_kernel(int64_t rows, int64_t features, float epsilon, const float* x,
                                         const float* gamma, const float* beta, float* y, float* mean,
                                         float* variance) {
  __shared__ float partials[kThreadsPerBlock / kWarp];
  const auto count = static_cast<float>(features);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * features;
    float sum = 0.0f;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) sum += xr[f];
    const float m = block_sum(sum, partials) / count;
    // Two passes: the mean of squared deviations does not cancel as E[x^2] - m^2 would.
    float squares = 0.0f;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) squares += (xr[f] - m) * (xr[f] - m);
    const float var = block_sum(squares, partials) / count;
    const float inv_std = 1.0f / sqrtf(var + epsilon);
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x)
      y[r * features + f] = (xr[f] - m) * inv_std * gamma[f] + beta[f];
    if (threadIdx.x == 0) {
      mean[r] = m;
      variance[r] = var;
    }
  }
}

__global__ void layernorm_input_gradient_kernel(int64_t rows, int64_t features, float epsilon, const float* x,
                                                const float* dy, const float* gamma, const float* mean,
                                                const float* variance, float* dx) {
  __shared__ float partials[kThreadsPerBlock / kWarp];
  const auto count = static_cast<float>(features);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * features;
    const float* gr = dy + r * features;
    const float inv_std = 1.0f / sqrtf(variance[r] + epsilon);
    float sum_g = 0.0f, sum_g_xhat = 0.0f;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) {
      const float g = gr[f] * gamma[f];
      sum_g += g;
      sum_g_xhat += g * (xr[f] - mean[r]) * inv_std;
    }
    const float mean_g = block_sum(sum_g, partials) / count;
    const float mean_g_xhat = block_sum(sum_g_xhat, partials) / count;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) {
      const float xhat = (xr[f] - mean[r]) * inv_std;
      dx[r * features + f] = inv_std * (gr[f] * gamma[f] - mean_g - xhat * mean_g_xhat);
    }
  }
}

__global__ void layernorm_parameter_gradient_kernel(int64_t rows, int64_t features, float epsilon, const float* x,
                                                    const float* dy, const float* mean, const float* variance,
                                                    float* dgamma, float* dbeta) {
  __shared__ double lane_dy[kRowLanes][kFeatureTile];
  __shared__ double lane_dy_xhat[kRowLanes][kFeatureTile];
  const int64_t f = blockIdx.x * int64_t{kFeatureTile} + threadIdx.x;
  double sum_dy = 0.0, sum_dy_xhat = 0.0;
  if (f < features) {
    for (int64_t r = threadIdx.y; r < rows; r += kRowLanes) {
      const float g = dy[r * features + f];
      sum_dy += g;
      sum_dy_xhat += g * ((x[r * features + f] - mean[r]) / sqrtf(variance[r] + epsilon));
    }
  }
  lane_dy[threadIdx.y][threadIdx.x] = sum_dy;
  lane_dy_xhat[threadIdx.y][threadIdx.x] = sum_dy_xhat;
  __syncthreads();
  if (threadIdx.y == 0 && f < features) {
    for (int lane = 1; lane < kRowLanes; ++lane) {
      sum_dy += lane_dy[lane][threadIdx.x];
      sum_dy_xhat += lane_dy_xhat[lane][threadIdx.x];
    }
    dgamma[f] += static_cast<float>(sum_dy_xhat);
    dbeta[f] += static_cast<float>(sum_dy);
  }
}

// Element i of an NCHW tensor as [batch, channels, spatial]: its channel.
__device__ int64_t channel_of(int64_t i, const ChannelLayout& l) { return i / l.spatial % l.channels; }

// One block per channel (grid-stride over channels), threads over its batch * spatial elements.
__global__ void batchnorm_sums_kernel(ChannelLayout l, const float* x, double* sum, double* sum_sq) {
  __shared__ double partials[kThreadsPerBlock / kWarp];
  const int64_t per_channel = l.batch * l.spatial;
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {
    double a = 0.0, b = 0.0;
    for (int64_t i = threadIdx.x; i < per_channel; i += blockDim.x) {
      const double v = x[(i / l.spatial * l.channels + c) * l.spatial + i % l.spatial];
      a += v;
      b += v * v;
    }
    a = block_sum(a, partials);
    b = block_sum(b, partials);
    if (threadIdx.x == 0) {
      sum[c] = a;
      sum_sq[c] = b;
    }
  }
}

__global__ void batchnorm_apply_kernel(ChannelLayout l, const float* x, const float* mean, const float* inv_std,
                                       const float* gamma, const float* beta, float* y) {
  const int64_t n = l.batch * l.channels * l.spatial;
  SB_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = channel_of(i, l);
    const float scale = inv_std[c] * gamma[c];
    const float shift = beta[c] - mean[c] * scale;
    y[i] = x[i] * scale + shift;
  }
}

__global__ void batchnorm_gradient_sums_kernel(ChannelLayout l, const float* x, const float* dy, const float* mean,
                                               const float* inv_std, double* sum_dy, double* sum_dy_xhat) {
  __shared__ double partials[kThreadsPerBlock / kWarp];
  const int64_t per_channel = l.batch * l.spatial;
  for (int64_t c = blockIdx.x; c < l.channels; c += gridDim.x) {
    double a = 0.0, b = 0.0;
    for (int64_t i = threadIdx.x; i < per_channel; i += blockDim.x) {
      const int64_t at = (i / l.spatial * l.channels + c) * l.spatial + i % l.spatial;
      const double g = dy[at];
      a += g;
      b += g * (static_cast<double>(x[at]) - mean[c]);
    }
    a = block_sum(a, partials);
    b = block_sum(b, partials);
    if (threadIdx.x == 0) {
      sum_dy[c] = a;
      sum_dy_xhat[c] = b * inv_std[c];
    }
  }
}

__global__ void batchnorm_input_gradient_kernel(ChannelLayout l, const float* x, const float* dy, const float* mean,
                                                const float* inv_std, const float* gamma, const double* sum_dy,
                                                const double* sum_dy_xhat, double count, float* dx) {
  const int64_t n = l.batch * l.channels * l.spatial;
  SB_GRID_STRIDE_LOOP(i, n) {
    const int64_t c = channel_of(i, l);
    const float k = gamma[c] * inv_std[c];
    const auto mean_dy = static_cast<float>(sum_dy[c] / count);
    const auto mean_dy_xhat = static_cast<float>(sum_dy_xhat[c] / count);
    const float xhat = (x[i] - mean[c]) * inv_std[c];
    dx[i] = k * (dy[i] - mean_dy - xhat * mean_dy_xhat);
  }
}

__global__ void batchnorm_statistics_kernel(int64_t channels, const double* sum, const double* sum_sq, double count,
                                            double epsilon, float* mean, float* inv_std) {
  SB_GRID_STRIDE_LOOP(c, channels) {
    const kernels::ChannelStatistics channel = kernels::channel_statistics(sum[c], sum_sq[c], count, epsilon);
    mean[c] = channel.mean;
    inv_std[c] = channel.inv_std;
  }
}

__global__ void batchnorm_parameter_gradients_kernel(int64_t channels, const double* sum_dy, const double* sum_dy_xhat,
                                                     float* dgamma, float* dbeta) {
  SB_GRID_STRIDE_LOOP(c, channels) {
    dgamma[c] += static_cast<float>(sum_dy_xhat[c]);
    dbeta[c] += static_cast<float>(sum_dy[c]);
  }
}

}  // namespace

void layernorm_forward(cudaStream_t stream, int64_t rows, int64_t features, float epsilon, const float* x,
                       const float* gamma, const float* beta, float* y, float* mean, float* variance) {
  layernorm_forward_kernel<<<blocks_for_groups(rows), kThreadsPerBlock, 0, stream>>>(rows, features, epsilon, x, gamma,
                                                                                     beta, y, mean, variance);
  SB_CUDA_CHECK(cudaGetLastError());
}

void layernorm_backward(cudaStream_t stream, int64_t rows, int64_t features, float epsilon, const float* x,
                        const float* dy, const float* gamma, const float* mean, const float* variance, float* dx,
                        float* dgamma, float* dbeta) {
  if (dx != nullptr) {
    layernorm_input_gradient_kernel<<<blocks_for_groups(rows), kThreadsPerBlock, 0, stream>>>(
        rows, features, epsilon, x, dy, gamma, mean, variance, dx);
    SB_CUDA_CHECK(cudaGetLastError());
  }
  const auto tiles = static_cast<unsigned>((features + kFeatureTile - 1) / kFeatureTile);
  layernorm_parameter_gradient_kernel<<<tiles, dim3(kFeatureTile, kRowLanes), 0, stream>>>(
      rows, features, epsilon, x, dy, mean, variance, dgamma, dbeta);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_sums(cudaStream_t stream, const ChannelLayout& layout, const float* x, double* sum, double* sum_sq) {
  batchnorm_sums_kernel<<<blocks_for_groups(layout.channels), kThreadsPerBlock, 0, stream>>>(layout, x, sum, sum_sq);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_statistics(cudaStream_t stream, int64_t channels, const double* sum, const double* sum_sq, double count,
                          double epsilon, float* mean, float* inv_std) {
  batchnorm_statistics_kernel<<<blocks_for(channels), kThreadsPerBlock, 0, stream>>>(channels, sum, sum_sq, count,
                                                                                     epsilon, mean, inv_std);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_add_parameter_gradients(cudaStream_t stream, int64_t channels, const double* sum_dy,
                                       const double* sum_dy_xhat, float* dgamma, float* dbeta) {
  batchnorm_parameter_gradients_kernel<<<blocks_for(channels), kThreadsPerBlock, 0, stream>>>(
      channels, sum_dy, sum_dy_xhat, dgamma, dbeta);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_apply(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* mean,
                     const float* inv_std, const float* gamma, const float* beta, float* y) {
  batchnorm_apply_kernel<<<blocks_for(layout.batch * layout.channels * layout.spatial), kThreadsPerBlock, 0, stream>>>(
      layout, x, mean, inv_std, gamma, beta, y);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_gradient_sums(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* dy,
                             const float* mean, const float* inv_std, double* sum_dy, double* sum_dy_xhat) {
  batchnorm_gradient_sums_kernel<<<blocks_for_groups(layout.channels), kThreadsPerBlock, 0, stream>>>(
      layout, x, dy, mean, inv_std, sum_dy, sum_dy_xhat);
  SB_CUDA_CHECK(cudaGetLastError());
}

void batchnorm_input_gradient(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* dy,
                              const float* mean, const float* inv_std, const float* gamma, const double* sum_dy,
                              const double* sum_dy_xhat, double count, float* dx) {
  batchnorm_input_gradient_kernel<<<blocks_for(layout.batch * layout.channels * layout.spatial), kThreadsPerBlock, 0,
                                    stream>>>(layout, x, dy, mean, inv_std, gamma, sum_dy, sum_dy_xhat, count, dx);
  SB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace splitbrain::exec::cuda
