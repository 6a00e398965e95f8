#include "exec/cuda/elementwise_add.h"

#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {
std::size_t checked_bytes(int inputs, int64_t elements) {
  if (inputs < 1 || elements <= 0)
    throw kernels::KernelArgumentError("AddKernel: needs at least 1 input and elements > 0");
  return static_cast<std::size_t>(elements) * sizeof(float);
}
}  // namespace

AddKernel::AddKernel(CudaContext& context, int inputs, int64_t elements)
    : context_(context),
      inputs_(inputs),
      elements_(elements),
      sum_(checked_bytes(inputs, elements)),
      addend_(inputs > 1 ? sum_.bytes() : 0) {}

void AddKernel::forward(std::span<const float* const> xs, float* y) {
  if (xs.size() != static_cast<std::size_t>(inputs_))
    throw kernels::KernelArgumentError("AddKernel::forward: got " + std::to_string(xs.size()) + " inputs, built for " +
                                       std::to_string(inputs_));
  const float one = 1.0f;
  upload(context_.stream(), xs[0], sum_.bytes(), sum_);
  for (std::size_t i = 1; i < xs.size(); ++i) {
    // Stream order keeps the next upload into addend_ behind this saxpy.
    upload(context_.stream(), xs[i], addend_.bytes(), addend_);
    SB_CUBLAS_CHECK(cublasSaxpy_64(context_.cublas(), elements_, &one, addend_.as<float>(), 1, sum_.as<float>(), 1));
  }
  download(context_.stream(), sum_, sum_.bytes(), y);
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
