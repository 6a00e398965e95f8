#include "exec/cuda/adaptive_avgpool.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

AdaptiveBins checked(const kernels::AdaptiveAvgPoolShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.height <= 0 || s.width <= 0 || s.out_height <= 0 || s.out_width <= 0)
    throw kernels::KernelArgumentError("adaptive_avgpool: every dim must be positive");
  return {s.batch * s.channels, s.height, s.width, s.out_height, s.out_width};
}

enum Slot : std::size_t { kInput, kOutput };

std::size_t input_bytes(const AdaptiveBins& b) {
  return static_cast<std::size_t>(b.planes * b.height * b.width) * sizeof(float);
}
std::size_t output_bytes(const AdaptiveBins& b) {
  return static_cast<std::size_t>(b.planes * b.out_height * b.out_width) * sizeof(float);
}

}  // namespace

AdaptiveAvgPoolKernel::AdaptiveAvgPoolKernel(CudaContext& context, const kernels::AdaptiveAvgPoolShape& shape)
    : context_(context), shape_(shape), bins_(checked(shape)) {}

void AdaptiveAvgPoolKernel::forward(const float* x, float* y) {
  const AdaptiveBins& bins = bins_;
  auto* device_x = static_cast<float*>(context_.staging(kInput, input_bytes(bins)));
  auto* device_y = static_cast<float*>(context_.staging(kOutput, output_bytes(bins)));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_x, x, input_bytes(bins), cudaMemcpyDefault, context_.stream()));
  adaptive_avgpool_forward_on_device(context_.stream(), bins, device_x, device_y);
  SB_CUDA_CHECK(cudaMemcpyAsync(y, device_y, output_bytes(bins), cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
}

void AdaptiveAvgPoolKernel::backward(const float* dy, float* dx) {
  const AdaptiveBins& bins = bins_;
  auto* device_dx = static_cast<float*>(context_.staging(kInput, input_bytes(bins)));
  auto* device_dy = static_cast<float*>(context_.staging(kOutput, output_bytes(bins)));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_dy, dy, output_bytes(bins), cudaMemcpyDefault, context_.stream()));
  adaptive_avgpool_backward_on_device(context_.stream(), bins, device_dy, device_dx);
  SB_CUDA_CHECK(cudaMemcpyAsync(dx, device_dx, input_bytes(bins), cudaMemcpyDefault, context_.stream()));
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
