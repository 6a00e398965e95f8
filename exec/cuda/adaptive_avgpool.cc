#include "exec/cuda/adaptive_avgpool.h"

#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

AdaptiveBins bins(const kernels::AdaptiveAvgPoolShape& s) {
  return {s.batch * s.channels, s.height, s.width, s.out_height, s.out_width};
}

}  // namespace

AdaptiveAvgPoolKernel::AdaptiveAvgPoolKernel(CudaContext& context, const kernels::AdaptiveAvgPoolShape& shape)
    : context_(context), shape_(kernels::checked(shape)), bins_(bins(shape_)) {}

void AdaptiveAvgPoolKernel::forward(const float* x, float* y) {
  adaptive_avgpool_forward_on_device(context_.stream(), bins_, x, y);
}

void AdaptiveAvgPoolKernel::backward(const float* dy, float* dx) {
  adaptive_avgpool_backward_on_device(context_.stream(), bins_, dy, dx);
}

std::unique_ptr<kernels::AdaptiveAvgPoolKernel> make_adaptive_avgpool(CudaContext& context,
                                                                      const kernels::AdaptiveAvgPoolShape& shape) {
  return std::make_unique<AdaptiveAvgPoolKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
