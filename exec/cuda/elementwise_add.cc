#include "exec/cuda/elementwise_add.h"

#include <algorithm>
#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {
int64_t checked_elements(int inputs, int64_t elements) {
  if (inputs < 1 || elements <= 0)
    throw kernels::KernelArgumentError("AddKernel: needs at least 1 input and elements > 0");
  return elements;
}
}  // namespace

AddKernel::AddKernel(CudaContext& context, int inputs, int64_t elements)
    : context_(context), inputs_(inputs), elements_(checked_elements(inputs, elements)) {}

void AddKernel::forward(std::span<const float* const> xs, float* y) {
  if (xs.size() != static_cast<std::size_t>(inputs_))
    throw kernels::KernelArgumentError("AddKernel::forward: got " + std::to_string(xs.size()) + " inputs, built for " +
                                       std::to_string(inputs_));
  const auto bytes = static_cast<std::size_t>(elements_) * sizeof(float);
  // Copying x_0 into y would overwrite a later input that y is before it is added: sum elsewhere.
  const bool y_is_a_later_input = std::find(xs.begin() + 1, xs.end(), y) != xs.end();
  float* sum = y_is_a_later_input ? static_cast<float*>(context_.staging(0, bytes)) : y;
  if (sum != xs[0]) SB_CUDA_CHECK(cudaMemcpyAsync(sum, xs[0], bytes, cudaMemcpyDeviceToDevice, context_.stream()));
  const float one = 1.0f;
  for (std::size_t i = 1; i < xs.size(); ++i)
    SB_CUBLAS_CHECK(cublasSaxpy_64(context_.cublas(), elements_, &one, xs[i], 1, sum, 1));
  if (sum != y) SB_CUDA_CHECK(cudaMemcpyAsync(y, sum, bytes, cudaMemcpyDeviceToDevice, context_.stream()));
}

}  // namespace splitbrain::exec::cuda
