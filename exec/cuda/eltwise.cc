#include "exec/cuda/eltwise.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {
int64_t checked_elements(int64_t elements) {
  if (elements <= 0) throw kernels::KernelArgumentError("ActivationKernel: elements must be positive");
  return elements;
}
}  // namespace

ActivationKernel::ActivationKernel(CudaContext& context, kernels::Activation kind, int64_t elements)
    : context_(context),
      kind_(kind),
      elements_(checked_elements(elements)),
      desc_(1, 1, 1, elements),
      relu_(CUDNN_ACTIVATION_RELU),
      input_(static_cast<std::size_t>(elements) * sizeof(float)),
      output_(static_cast<std::size_t>(elements) * sizeof(float)),
      grad_(static_cast<std::size_t>(elements) * sizeof(float)) {}

void ActivationKernel::forward(const float* x, float* y) {
  const float one = 1.0f, zero = 0.0f;
  upload(context_.stream(), x, input_.bytes(), input_);
  if (kind_ == kernels::Activation::relu) {
    SB_CUDNN_CHECK(cudnnActivationForward(context_.cudnn(), relu_.get(), &one, desc_.get(), input_.data(), &zero,
                                          desc_.get(), output_.data()));
  } else {
    gelu_tanh_forward(context_.stream(), elements_, input_.as<float>(), output_.as<float>());
  }
  download(context_.stream(), output_, output_.bytes(), y);
  context_.synchronize();
}

void ActivationKernel::backward(const float* saved, const float* dy, float* dx) {
  const float one = 1.0f, zero = 0.0f;
  upload(context_.stream(), saved, input_.bytes(), input_);
  upload(context_.stream(), dy, output_.bytes(), output_);
  if (kind_ == kernels::Activation::relu) {
    SB_CUDNN_CHECK(cudnnActivationBackward(context_.cudnn(), relu_.get(), &one, desc_.get(), input_.data(), desc_.get(),
                                           output_.data(), desc_.get(), input_.data(), &zero, desc_.get(),
                                           grad_.data()));
  } else {
    gelu_tanh_backward(context_.stream(), elements_, input_.as<float>(), output_.as<float>(), grad_.as<float>());
  }
  download(context_.stream(), grad_, grad_.bytes(), dx);
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
