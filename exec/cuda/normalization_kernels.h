#pragma once
// Own normalisation kernels on device pointers, queued on `stream`: layer normalisation (cuDNN's
// legacy API has none) and the four training-mode batch-norm phases of cpu/batchnorm.h (cuDNN's
// batch norm, like oneDNN's, takes no global sums from other ranks). Same formulas as the CPU;
// per-channel sums in double as there.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// Rows of `features`, biased variance (oneDNN's convention), eps added in float as the CPU.
void layernorm_forward(cudaStream_t stream, int64_t rows, int64_t features, float epsilon, const float* x,
                       const float* gamma, const float* beta, float* y, float* mean, float* variance);
// dx = inv_std (g dy - mean(g dy) - xhat mean(g dy xhat)), skipped when dx is null (no input
// gradient wanted); dgamma += sum dy xhat; dbeta += sum dy (micro-batches accumulate).
void layernorm_backward(cudaStream_t stream, int64_t rows, int64_t features, float epsilon, const float* x,
                        const float* dy, const float* gamma, const float* mean, const float* variance, float* dx,
                        float* dgamma, float* dbeta);

// NCHW as [batch, channels, spatial].
struct ChannelLayout {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t spatial = 1;
};

// sum[c], sum_sq[c] over the local tensor.
void batchnorm_sums(cudaStream_t stream, const ChannelLayout& layout, const float* x, double* sum, double* sum_sq);
// mean[c], inv_std[c] from the sums: kernels::channel_statistics, the host's arithmetic.
void batchnorm_statistics(cudaStream_t stream, int64_t channels, const double* sum, const double* sum_sq, double count,
                          double epsilon, float* mean, float* inv_std);
// dgamma[c] += float(sum_dy_xhat[c]), dbeta[c] += float(sum_dy[c]).
void batchnorm_add_parameter_gradients(cudaStream_t stream, int64_t channels, const double* sum_dy,
                                       const double* sum_dy_xhat, float* dgamma, float* dbeta);
// y = x * (inv_std gamma) + (beta - mean inv_std gamma), per channel.
void batchnorm_apply(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* mean,
                     const float* inv_std, const float* gamma, const float* beta, float* y);
// sum_dy[c] and sum_dy_xhat[c] over the local tensor.
void batchnorm_gradient_sums(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* dy,
                             const float* mean, const float* inv_std, double* sum_dy, double* sum_dy_xhat);
// dx = gamma inv_std (dy - sum_dy / count - xhat sum_dy_xhat / count).
void batchnorm_input_gradient(cudaStream_t stream, const ChannelLayout& layout, const float* x, const float* dy,
                              const float* mean, const float* inv_std, const float* gamma, const double* sum_dy,
                              const double* sum_dy_xhat, double count, float* dx);

}  // namespace splitbrain::exec::cuda
