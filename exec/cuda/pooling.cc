#include "exec/cuda/pooling.h"

#include <algorithm>
#include <limits>
#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/kernel_argument_error.h"

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

// cuDNN's own (symmetric, floor) padding gives the shape's windows exactly.
bool cudnn_pads_alike(const kernels::Pool2dShape& s) {
  const auto floor_extent = [](int64_t in, int64_t pad, int64_t kernel, int64_t stride) {
    return (in + 2 * pad - kernel) / stride + 1;
  };
  return s.pad_top == s.pad_bottom && s.pad_left == s.pad_right &&
         floor_extent(s.height, s.pad_top, s.kernel_h, s.stride_h) == s.out_height() &&
         floor_extent(s.width, s.pad_left, s.kernel_w, s.stride_w) == s.out_width();
}

std::optional<PlanePadding> explicit_padding(const kernels::Pool2dShape& s) {
  if (cudnn_pads_alike(s)) return std::nullopt;
  return PlanePadding{s.batch * s.channels,
                      s.height,
                      s.width,
                      s.pad_top,
                      s.pad_left,
                      covered_extent(s.height, s.pad_top, s.out_height(), s.kernel_h, s.stride_h),
                      covered_extent(s.width, s.pad_left, s.out_width(), s.kernel_w, s.stride_w)};
}

TensorDescriptor input_desc(const kernels::Pool2dShape& s, const std::optional<PlanePadding>& padding) {
  if (padding) return TensorDescriptor(s.batch, s.channels, padding->padded_h, padding->padded_w);
  return TensorDescriptor(s.batch, s.channels, s.height, s.width);
}

PoolingDescriptor pooling_desc(kernels::PoolKind kind, const kernels::Pool2dShape& s, bool padded_explicitly) {
  const auto mode = kind == kernels::PoolKind::max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  return PoolingDescriptor(mode, s.kernel_h, s.kernel_w, padded_explicitly ? 0 : s.pad_top,
                           padded_explicitly ? 0 : s.pad_left, s.stride_h, s.stride_w);
}

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

Pool2dKernel::Pool2dKernel(CudaContext& context, kernels::PoolKind kind, const kernels::Pool2dShape& shape)
    : context_(context),
      kind_(kind),
      shape_(checked(kind, shape)),
      explicit_padding_(explicit_padding(shape)),
      input_desc_(input_desc(shape, explicit_padding_)),
      output_desc_(shape.batch, shape.channels, shape.out_height(), shape.out_width()),
      pooling_desc_(pooling_desc(kind, shape, explicit_padding_.has_value())) {
  const auto& s = shape_;
  int n = 0, c = 0, h = 0, w = 0;
  SB_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(pooling_desc_.get(), input_desc_.get(), &n, &c, &h, &w));
  require(h == s.out_height() && w == s.out_width(), "cuDNN's output " + std::to_string(h) + "x" + std::to_string(w) +
                                                         " differs from the shape's " + std::to_string(s.out_height()) +
                                                         "x" + std::to_string(s.out_width()));
  const int64_t planes = s.batch * s.channels;
  const int64_t input_elements = explicit_padding_ ? planes * explicit_padding_->padded_h * explicit_padding_->padded_w
                                                   : planes * s.height * s.width;
  const int64_t output_elements = planes * s.out_height() * s.out_width();
  input_ = DeviceBuffer(float_bytes(input_elements));
  input_grad_ = DeviceBuffer(float_bytes(input_elements));
  if (explicit_padding_) user_input_ = DeviceBuffer(float_bytes(planes * s.height * s.width));
  output_ = DeviceBuffer(float_bytes(output_elements));
  output_grad_ = DeviceBuffer(float_bytes(output_elements));
}

std::size_t Pool2dKernel::workspace_bytes() const {
  if (kind_ != kernels::PoolKind::max) return 0;
  const auto& s = shape_;
  return float_bytes(s.batch * s.channels * (s.height * s.width + s.out_height() * s.out_width()));
}

void Pool2dKernel::upload_input(const float* x) {
  const auto& s = shape_;
  if (!explicit_padding_) {
    upload(context_.stream(), x, input_.bytes(), input_);
    return;
  }
  upload(context_.stream(), x, float_bytes(s.batch * s.channels * s.height * s.width), user_input_);
  // -inf never wins a max window that holds an input element; zeros are what average counts.
  const float fill = kind_ == kernels::PoolKind::max ? -std::numeric_limits<float>::infinity() : 0.0f;
  pad_planes(context_.stream(), *explicit_padding_, user_input_.as<float>(), fill, input_.as<float>());
}

void Pool2dKernel::forward(const float* x, float* y, void* workspace) {
  const float one = 1.0f, zero = 0.0f;
  if (workspace_bytes() > 0 && workspace == nullptr)
    throw kernels::KernelArgumentError("Pool2dKernel::forward: max pooling needs a workspace");
  upload_input(x);
  SB_CUDNN_CHECK(cudnnPoolingForward(context_.cudnn(), pooling_desc_.get(), &one, input_desc_.get(), input_.data(),
                                     &zero, output_desc_.get(), output_.data()));
  download(context_.stream(), output_, output_.bytes(), y);
  if (workspace_bytes() > 0) {
    const std::size_t x_bytes = workspace_bytes() - output_.bytes();
    // The workspace is the caller's: device memory in a run, host memory in the kernel tests.
    SB_CUDA_CHECK(cudaMemcpyAsync(workspace, x, x_bytes, cudaMemcpyDefault, context_.stream()));
    download(context_.stream(), output_, output_.bytes(), static_cast<char*>(workspace) + x_bytes);
  }
  context_.synchronize();
}

void Pool2dKernel::backward(const float* dy, const void* workspace, float* dx) {
  const float one = 1.0f, zero = 0.0f;
  if (workspace_bytes() > 0) {
    if (workspace == nullptr)
      throw kernels::KernelArgumentError("Pool2dKernel::backward: max pooling needs a workspace");
    const std::size_t x_bytes = workspace_bytes() - output_.bytes();
    upload_input(static_cast<const float*>(workspace));
    upload(context_.stream(), static_cast<const char*>(workspace) + x_bytes, output_.bytes(), output_);
  }
  // Average pooling's backward reads neither x nor y; cuDNN still takes the (unset) buffers.
  upload(context_.stream(), dy, output_grad_.bytes(), output_grad_);
  SB_CUDNN_CHECK(cudnnPoolingBackward(context_.cudnn(), pooling_desc_.get(), &one, output_desc_.get(), output_.data(),
                                      output_desc_.get(), output_grad_.data(), input_desc_.get(), input_.data(), &zero,
                                      input_desc_.get(), input_grad_.data()));
  if (explicit_padding_) {
    crop_planes(context_.stream(), *explicit_padding_, input_grad_.as<float>(), user_input_.as<float>());
    download(context_.stream(), user_input_, user_input_.bytes(), dx);
  } else {
    download(context_.stream(), input_grad_, input_grad_.bytes(), dx);
  }
  context_.synchronize();
}

}  // namespace splitbrain::exec::cuda
