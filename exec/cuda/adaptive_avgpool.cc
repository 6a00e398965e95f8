#include "exec/cuda/adaptive_avgpool.h"

#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

AdaptiveBins checked(const kernels::AdaptiveAvgPoolShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.height <= 0 || s.width <= 0 || s.out_height <= 0 || s.out_width <= 0)
    throw kernels::KernelArgumentError("adaptive_avgpool: every dim must be positive");
  return {s.batch * s.channels, s.height, s.width, s.out_height, s.out_width};
}

}  // namespace

AdaptiveAvgPoolKernel::AdaptiveAvgPoolKernel(CudaContext& context, const kernels::AdaptiveAvgPoolShape& shape)
    : context_(context), shape_(shape), bins_(checked(shape)) {}

void AdaptiveAvgPoolKernel::forward(const float* x, float* y) {
  adaptive_avgpool_forward_on_device(context_.stream(), bins_, x, y);
}

void AdaptiveAvgPoolKernel::backward(const float* dy, float* dx) {
  adaptive_avgpool_backward_on_device(context_.stream(), bins_, dy, dx);
}

}  // namespace splitbrain::exec::cuda
