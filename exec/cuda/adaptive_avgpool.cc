#include "exec/cuda/adaptive_avgpool.h"

#include "exec/cpu/dnnl_check.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/indexing_kernels.h"

namespace splitbrain::exec::cuda {

namespace {

AdaptiveBins checked(const AdaptiveAvgPoolShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.height <= 0 || s.width <= 0 || s.out_height <= 0 || s.out_width <= 0)
    throw cpu::KernelArgumentError("adaptive_avgpool: every dim must be positive");
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

void adaptive_avgpool_forward(CudaContext& context, const AdaptiveAvgPoolShape& shape, const float* x, float* y) {
  const AdaptiveBins bins = checked(shape);
  auto* device_x = static_cast<float*>(context.staging(kInput, input_bytes(bins)));
  auto* device_y = static_cast<float*>(context.staging(kOutput, output_bytes(bins)));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_x, x, input_bytes(bins), cudaMemcpyHostToDevice, context.stream()));
  adaptive_avgpool_forward_on_device(context.stream(), bins, device_x, device_y);
  SB_CUDA_CHECK(cudaMemcpyAsync(y, device_y, output_bytes(bins), cudaMemcpyDeviceToHost, context.stream()));
  context.synchronize();
}

void adaptive_avgpool_backward(CudaContext& context, const AdaptiveAvgPoolShape& shape, const float* dy, float* dx) {
  const AdaptiveBins bins = checked(shape);
  auto* device_dx = static_cast<float*>(context.staging(kInput, input_bytes(bins)));
  auto* device_dy = static_cast<float*>(context.staging(kOutput, output_bytes(bins)));
  SB_CUDA_CHECK(cudaMemcpyAsync(device_dy, dy, output_bytes(bins), cudaMemcpyHostToDevice, context.stream()));
  adaptive_avgpool_backward_on_device(context.stream(), bins, device_dy, device_dx);
  SB_CUDA_CHECK(cudaMemcpyAsync(dx, device_dx, input_bytes(bins), cudaMemcpyDeviceToHost, context.stream()));
  context.synchronize();
}

}  // namespace splitbrain::exec::cuda
