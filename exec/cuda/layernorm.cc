#include "exec/cuda/layernorm.h"

#include "exec/cuda/normalization_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

LayerNormKernel::LayerNormKernel(CudaContext& context, const kernels::LayerNormShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {}

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

std::unique_ptr<kernels::LayerNormKernel> make_layernorm(CudaContext& context, const kernels::LayerNormShape& shape) {
  return std::make_unique<LayerNormKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
