#pragma once
// Training-mode batch normalisation (exec/kernels/batchnorm.h) on the GPU: the twin of
// cpu::BatchNormKernel, its phases as own kernels (normalization_kernels.h), the per-channel
// arithmetic between them too (kernels::channel_statistics, compiled for the GPU).
//
// Every pointer is device memory (cuda_context.h): the tensors (x, y, dy, dx), gamma, beta, their
// gradients, and the per-channel sums, mean and inv_std, which the op keeps on the device. Every
// phase is queued on the context's stream and returns without waiting. x == y and dx == dy are
// allowed: those kernels are elementwise.

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/normalization_kernels.h"
#include "exec/kernels/batchnorm.h"

namespace splitbrain::exec::cuda {

class BatchNormKernel final : public kernels::BatchNormKernel {
 public:
  // Throws KernelArgumentError unless batch, channels and spatial are positive.
  BatchNormKernel(CudaContext& context, const kernels::BatchNormShape& shape);

  const kernels::BatchNormShape& shape() const override { return shape_; }
  void local_sums(const float* x, double* sum, double* sum_sq) override;
  void statistics(const double* sum, const double* sum_sq, double count, double epsilon, float* mean,
                  float* inv_std) override;
  void normalize(const float* x, const float* mean, const float* inv_std, const float* gamma, const float* beta,
                 float* y) override;
  void backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std, double* sum_dy,
                           double* sum_dy_xhat) override;
  void add_parameter_gradients(const double* sum_dy, const double* sum_dy_xhat, float* dgamma, float* dbeta) override;
  void backward_data(const float* x, const float* dy, const float* mean, const float* inv_std, const float* gamma,
                     const double* sum_dy, const double* sum_dy_xhat, double count, float* dx) override;

 private:
  CudaContext& context_;
  kernels::BatchNormShape shape_;
  ChannelLayout layout_;
};

}  // namespace splitbrain::exec::cuda
