#pragma once
// Training-mode batch normalisation (exec/kernels/batchnorm.h) on the GPU: the twin of
// cpu::BatchNormKernel, its four tensor phases as own kernels (normalization_kernels.h). The ops
// all-reduce the per-channel sums between the phases and do the per-channel arithmetic
// (kernels::batchnorm_statistics, ...) on the host, exactly as for the CPU backend: it touches
// only `channels` values.
//
// The tensors (x, y, dy, dx), gamma and beta are device memory (cuda_context.h). The per-channel
// mean, inv_std and double sums may be HOST memory: the op keeps them there for its host steps and
// all-reduces. They go through the context's staging buffers with cudaMemcpyDefault (from pageable
// memory the copy has taken them when the call returns). normalize and backward_data return
// without waiting; local_sums and backward_local_sums synchronise once, as the host reads their
// sums next. x == y and dx == dy are allowed: those kernels are elementwise.

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
  void normalize(const float* x, const float* mean, const float* inv_std, const float* gamma, const float* beta,
                 float* y) override;
  void backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std, double* sum_dy,
                           double* sum_dy_xhat) override;
  void backward_data(const float* x, const float* dy, const float* mean, const float* inv_std, const float* gamma,
                     const double* sum_dy, const double* sum_dy_xhat, double count, float* dx) override;

 private:
  CudaContext& context_;
  kernels::BatchNormShape shape_;
  ChannelLayout layout_;
};

}  // namespace splitbrain::exec::cuda
