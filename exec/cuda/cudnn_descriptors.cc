#include "exec/cuda/cudnn_descriptors.h"

#include <limits>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/release_in_destructor.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

int checked_int(int64_t value, const std::string& what) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    throw kernels::KernelArgumentError(what + " (" + std::to_string(value) +
                                       ") does not fit the int that cuDNN/cuBLAS take");
  return static_cast<int>(value);
}

TensorDescriptor::TensorDescriptor(int64_t n, int64_t c, int64_t h, int64_t w) {
  SB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_));
  SB_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, checked_int(n, "tensor N"),
                                            checked_int(c, "tensor C"), checked_int(h, "tensor H"),
                                            checked_int(w, "tensor W")));
}

TensorDescriptor::~TensorDescriptor() {
  release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroyTensorDescriptor(desc_)); });
}

FilterDescriptor::FilterDescriptor(int64_t out, int64_t in_per_group, int64_t kh, int64_t kw) {
  SB_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_));
  SB_CUDNN_CHECK(cudnnSetFilter4dDescriptor(desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                            checked_int(out, "filter out_channels"),
                                            checked_int(in_per_group, "filter in_channels/groups"),
                                            checked_int(kh, "filter kernel_h"), checked_int(kw, "filter kernel_w")));
}

FilterDescriptor::~FilterDescriptor() {
  release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroyFilterDescriptor(desc_)); });
}

ConvolutionDescriptor::ConvolutionDescriptor(bool tf32, int64_t pad_h, int64_t pad_w, int64_t stride_h,
                                             int64_t stride_w, int64_t dilation_h, int64_t dilation_w, int64_t groups) {
  SB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_));
  SB_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      desc_, checked_int(pad_h, "pad_h"), checked_int(pad_w, "pad_w"), checked_int(stride_h, "stride_h"),
      checked_int(stride_w, "stride_w"), checked_int(dilation_h, "dilation_h"), checked_int(dilation_w, "dilation_w"),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  SB_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc_, checked_int(groups, "groups")));
  SB_CUDNN_CHECK(cudnnSetConvolutionMathType(desc_, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
}

ConvolutionDescriptor::~ConvolutionDescriptor() {
  release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(desc_)); });
}

PoolingDescriptor::PoolingDescriptor(cudnnPoolingMode_t mode, int64_t kernel_h, int64_t kernel_w, int64_t pad_h,
                                     int64_t pad_w, int64_t stride_h, int64_t stride_w) {
  SB_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&desc_));
  SB_CUDNN_CHECK(cudnnSetPooling2dDescriptor(desc_, mode, CUDNN_NOT_PROPAGATE_NAN, checked_int(kernel_h, "kernel_h"),
                                             checked_int(kernel_w, "kernel_w"), checked_int(pad_h, "pad_h"),
                                             checked_int(pad_w, "pad_w"), checked_int(stride_h, "stride_h"),
                                             checked_int(stride_w, "stride_w")));
}

PoolingDescriptor::~PoolingDescriptor() {
  release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroyPoolingDescriptor(desc_)); });
}

ActivationDescriptor::ActivationDescriptor(cudnnActivationMode_t mode) {
  SB_CUDNN_CHECK(cudnnCreateActivationDescriptor(&desc_));
  SB_CUDNN_CHECK(cudnnSetActivationDescriptor(desc_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
}

ActivationDescriptor::~ActivationDescriptor() {
  release_in_destructor([&] { SB_CUDNN_CHECK(cudnnDestroyActivationDescriptor(desc_)); });
}

}  // namespace splitbrain::exec::cuda
