#include "exec/cuda/layernorm.h"

#include "exec/cuda/normalization_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {
const kernels::LayerNormShape& checked(const kernels::LayerNormShape& s) {
  if (s.rows <= 0 || s.features <= 0 || !(s.epsilon >= 0))
    throw kernels::KernelArgumentError("LayerNormKernel: rows and features must be positive, epsilon >= 0");
  return s;
}
}  // namespace

LayerNormKernel::LayerNormKernel(CudaContext& context, const kernels::LayerNormShape& shape)
    : context_(context), shape_(checked(shape)) {}

void LayerNormKernel::forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                              float* variance) {
  // The CPU (oneDNN) adds epsilon in float.
  layernorm_forward(context_.stream(), shape_.rows, shape_.features, static_cast<float>(shape_.epsilon), x, gamma, beta,
                    y, mean, variance);
}

void LayerNormKernel::backward(const float* x, const float* dy, const float* gamma, const float* mean,
                               const float* variance, float* dx, float* dgamma, float* dbeta) {
  layernorm_backward(context_.stream(), shape_.rows, shape_.features, static_cast<float>(shape_.epsilon), x, dy, gamma,
                     mean, variance, dx, dgamma, dbeta);
}

}  // namespace splitbrain::exec::cuda
