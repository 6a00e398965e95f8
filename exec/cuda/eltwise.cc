#include "exec/cuda/eltwise.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

ActivationKernel::ActivationKernel(CudaContext& context, kernels::Activation kind, int64_t elements)
    : context_(context),
      kind_(kind),
      elements_(kernels::checked_activation_elements(elements)),
      desc_(1, 1, 1, elements),
      relu_(CUDNN_ACTIVATION_RELU) {}

void ActivationKernel::forward(const float* x, float* y) {
  const float one = 1.0f, zero = 0.0f;
  if (kind_ == kernels::Activation::relu) {
    SB_CUDNN_CHECK(cudnnActivationForward(context_.cudnn(), relu_.get(), &one, desc_.get(), x, &zero, desc_.get(), y));
  } else {
    gelu_tanh_forward(context_.stream(), elements_, x, y);
  }
}

void ActivationKernel::backward(const float* saved, const float* dy, float* dx) {
  const float one = 1.0f, zero = 0.0f;
  if (kind_ == kernels::Activation::relu) {
    // The saved y stands for both y and x (relu's mask is the same from either).
    SB_CUDNN_CHECK(cudnnActivationBackward(context_.cudnn(), relu_.get(), &one, desc_.get(), saved, desc_.get(), dy,
                                           desc_.get(), saved, &zero, desc_.get(), dx));
  } else {
    gelu_tanh_backward(context_.stream(), elements_, saved, dy, dx);
  }
}

std::unique_ptr<kernels::ActivationKernel> make_activation(CudaContext& context, kernels::Activation kind,
                                                           int64_t elements) {
  return std::make_unique<ActivationKernel>(context, kind, elements);
}

}  // namespace splitbrain::exec::cuda
