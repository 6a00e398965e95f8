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

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }
}  // namespace

LayerNormKernel::LayerNormKernel(CudaContext& context, const kernels::LayerNormShape& shape)
    : context_(context),
      shape_(checked(shape)),
      x_(float_bytes(shape.rows * shape.features)),
      y_(float_bytes(shape.rows * shape.features)),
      dx_(float_bytes(shape.rows * shape.features)),
      gamma_(float_bytes(shape.features)),
      beta_(float_bytes(shape.features)),
      dgamma_(float_bytes(shape.features)),
      mean_(float_bytes(shape.rows)),
      variance_(float_bytes(shape.rows)) {}

void LayerNormKernel::forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                              float* variance) {
  cudaStream_t stream = context_.stream();
  upload(stream, x, x_.bytes(), x_);
  upload(stream, gamma, gamma_.bytes(), gamma_);
  upload(stream, beta, beta_.bytes(), beta_);
  // The CPU (oneDNN) adds epsilon in float.
  layernorm_forward(stream, shape_.rows, shape_.features, static_cast<float>(shape_.epsilon), x_.as<float>(),
                    gamma_.as<float>(), beta_.as<float>(), y_.as<float>(), mean_.as<float>(), variance_.as<float>());
  download(stream, y_, y_.bytes(), y);
  download(stream, mean_, mean_.bytes(), mean);
  download(stream, variance_, variance_.bytes(), variance);
  context_.synchronize();
}

void LayerNormKernel::backward(const float* x, const float* dy, const float* gamma, const float* mean,
                               const float* variance, float* dx, float* dgamma, float* dbeta) {
  cudaStream_t stream = context_.stream();
  upload(stream, x, x_.bytes(), x_);
  upload(stream, dy, y_.bytes(), y_);
  upload(stream, gamma, gamma_.bytes(), gamma_);
  upload(stream, mean, mean_.bytes(), mean_);
  upload(stream, variance, variance_.bytes(), variance_);
  upload(stream, dgamma, dgamma_.bytes(), dgamma_);
  upload(stream, dbeta, beta_.bytes(), beta_);
  layernorm_backward(stream, shape_.rows, shape_.features, static_cast<float>(shape_.epsilon), x_.as<float>(),
                     y_.as<float>(), gamma_.as<float>(), mean_.as<float>(), variance_.as<float>(), dx_.as<float>(),
                     dgamma_.as<float>(), beta_.as<float>());
  if (dx != nullptr) download(stream, dx_, dx_.bytes(), dx);
  download(stream, dgamma_, dgamma_.bytes(), dgamma);
  download(stream, beta_, beta_.bytes(), dbeta);
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
