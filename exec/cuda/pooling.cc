#include "exec/cuda/pooling.h"

#include <algorithm>
#include <string>

#include "exec/kernels/kernel_argument_error.h"
#include "model/max_pool_index.h"

namespace splitbrain::exec::cuda {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw kernels::KernelArgumentError("Pool2dKernel: " + what);
}

// The rows (or columns) of padded input the windows need: the leading padding and the input,
// and as far as the last window reaches (ceil_mode's, or one into the trailing padding).
int64_t covered_extent(int64_t in, int64_t pad_lo, int64_t out, int64_t kernel, int64_t stride) {
  return std::max(pad_lo + in, (out - 1) * stride + kernel);
}

// The CPU kernel's checks, so both backends refuse the same shapes.
const kernels::Pool2dShape& checked(kernels::PoolKind kind, const kernels::Pool2dShape& s) {
  require(s.batch > 0 && s.channels > 0 && s.height > 0 && s.width > 0, "input dims must be positive");
  require(s.kernel_h > 0 && s.kernel_w > 0 && s.stride_h > 0 && s.stride_w > 0, "kernel and stride must be positive");
  require(s.pad_top >= 0 && s.pad_bottom >= 0 && s.pad_left >= 0 && s.pad_right >= 0, "padding must be >= 0");
  require(s.out_height() > 0 && s.out_width() > 0, "the window does not fit the padded input");
  if (kind == kernels::PoolKind::average)
    require(covered_extent(s.height, s.pad_top, s.out_height(), s.kernel_h, s.stride_h) <=
                    s.pad_top + s.height + s.pad_bottom &&
                covered_extent(s.width, s.pad_left, s.out_width(), s.kernel_w, s.stride_w) <=
                    s.pad_left + s.width + s.pad_right,
            "average pooling with ceil_mode whose last window overhangs the padding is not supported");
  return s;
}

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
      shape_(checked(kind, shape)),
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

}  // namespace splitbrain::exec::cuda
