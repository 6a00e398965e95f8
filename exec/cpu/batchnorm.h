#pragma once
// Training-mode batch normalisation's tensor phases (exec/kernels/batchnorm.h). Own code, not
// oneDNN's batch_normalization: its backward computes the sums of dy and dy*xhat over the local
// tensor inside the primitive, with no way to substitute the global sums, so a split batch would
// get a wrong dx. All four phases are single bandwidth-bound passes.

#include "exec/kernels/batchnorm.h"

namespace splitbrain::exec::cpu {

class BatchNormKernel final : public kernels::BatchNormKernel {
 public:
  // Throws KernelArgumentError unless batch, channels and spatial are positive.
  explicit BatchNormKernel(const kernels::BatchNormShape& shape);
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
  kernels::BatchNormShape shape_;
};

}  // namespace splitbrain::exec::cpu
