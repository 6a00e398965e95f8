#pragma once
// Training-mode batch normalisation on the GPU: the twins of cpu/batchnorm.h's four tensor
// phases (same shape type, the context as an extra first argument), own kernels
// (normalization_kernels.h). The runtime all-reduces the per-channel sums between the phases
// exactly as for the CPU backend.
//
// The per-channel steps between the phases (cpu::batchnorm_statistics,
// cpu::batchnorm_parameter_gradients, cpu::batchnorm_update_running) touch only `channels`
// host values and stay the CPU functions.
//
// Host arrays in and out (see cuda_context.h), staged in the context's staging buffers; every
// call synchronises, so x == y and dx == dy are allowed as on the CPU.

#include "exec/cpu/batchnorm.h"
#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

using BatchNormShape = cpu::BatchNormShape;

// Phase 1: sum[c] and sum_sq[c] over the local tensor (overwritten).
void batchnorm_local_sums(CudaContext& context, const BatchNormShape& shape, const float* x, double* sum,
                          double* sum_sq);

// Phase 2: y = (x - mean) * inv_std * gamma + beta, per channel.
void batchnorm_normalize(CudaContext& context, const BatchNormShape& shape, const float* x, const float* mean,
                         const float* inv_std, const float* gamma, const float* beta, float* y);

// Phase 3: sum_dy[c] and sum_dy_xhat[c] over the local tensor (overwritten).
void batchnorm_backward_local_sums(CudaContext& context, const BatchNormShape& shape, const float* x, const float* dy,
                                   const float* mean, const float* inv_std, double* sum_dy, double* sum_dy_xhat);

// Phase 4: dx from the (all-reduced) sums over `count` elements per channel.
void batchnorm_backward_data(CudaContext& context, const BatchNormShape& shape, const float* x, const float* dy,
                             const float* mean, const float* inv_std, const float* gamma, const double* sum_dy,
                             const double* sum_dy_xhat, double count, float* dx);

}  // namespace splitbrain::exec::cuda
