#include "exec/cuda/elementwise_add.h"

#include <algorithm>
#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

AddKernel::AddKernel(CudaContext& context, int inputs, int64_t elements)
    : context_(context), inputs_(inputs), elements_(kernels::checked_add_elements(inputs, elements)) {}

void AddKernel::forward(std::span<const float* const> xs, float* y) {
  kernels::check_add_inputs(xs.size(), inputs_);
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

std::unique_ptr<kernels::AddKernel> make_add(CudaContext& context, int inputs, int64_t elements) {
  return std::make_unique<AddKernel>(context, inputs, elements);
}

}  // namespace splitbrain::exec::cuda
