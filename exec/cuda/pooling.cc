#include "exec/cuda/pooling.h"

#include <algorithm>
#include <string>

#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/shape_checks.h"
#include "model/max_pool_index.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

PoolGeometry geometry(const kernels::Pool2dShape& s) {
  return {.planes = s.batch * s.channels,
          .height = s.height,
          .width = s.width,
          .out_height = s.out_height(),
          .out_width = s.out_width(),
          .kernel_h = s.kernel_h,
          .kernel_w = s.kernel_w,
          .stride_h = s.stride_h,
          .stride_w = s.stride_w,
          .pad_top = s.pad_top,
          .pad_left = s.pad_left};
}

}  // namespace

Pool2dKernel::Pool2dKernel(CudaContext& context, kernels::PoolKind kind, const kernels::Pool2dShape& shape)
    : context_(context),
      kind_(kind),
      shape_(kernels::checked(kind, shape)),
      geometry_(geometry(shape_)),
      index_bytes_(static_cast<int>(model::max_pool_index_bytes(shape_.kernel_h * shape_.kernel_w))) {}

std::size_t Pool2dKernel::workspace_bytes() const {
  if (kind_ != kernels::PoolKind::max) return 0;
  const int64_t outputs = geometry_.planes * geometry_.out_height * geometry_.out_width;
  return static_cast<std::size_t>(outputs * index_bytes_);
}

void Pool2dKernel::forward(const float* x, float* y, void* workspace) {
  if (kind_ == kernels::PoolKind::average) {
    average_pool_forward(context_.stream(), geometry_, x, y);
    return;
  }
  if (workspace == nullptr) throw kernels::KernelArgumentError("Pool2dKernel::forward: max pooling needs a workspace");
  max_pool_forward(context_.stream(), geometry_, x, y, workspace, index_bytes_);
}

void Pool2dKernel::backward(const float* dy, const void* workspace, float* dx) {
  if (kind_ == kernels::PoolKind::average) {
    average_pool_backward(context_.stream(), geometry_, dy, dx);
    return;
  }
  if (workspace == nullptr) throw kernels::KernelArgumentError("Pool2dKernel::backward: max pooling needs a workspace");
  max_pool_backward(context_.stream(), geometry_, dy, workspace, index_bytes_, dx);
}

std::unique_ptr<kernels::Pool2dKernel> make_pool2d(CudaContext& context, kernels::PoolKind kind,
                                                   const kernels::Pool2dShape& shape) {
  return std::make_unique<Pool2dKernel>(context, kind, shape);
}

}  // namespace splitbrain::exec::cuda
