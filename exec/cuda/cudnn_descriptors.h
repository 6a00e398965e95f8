#pragma once
// Owned cuDNN descriptors (create in the constructor, destroy in the destructor) for the legacy
// API the kernels use, and the int conversion that API needs: its dims are `int`, so a larger
// extent is a KernelArgumentError, not a silent wrap. The destroy calls are checked too, through
// release_in_destructor.h: a failure is printed, never thrown from a destructor.
//
// cuDNN 9 marks this API (descriptors, cudnnConvolution*, cudnnPooling*, cudnnActivation*)
// deprecated in favour of the graph API, but still ships it; the attributes warn only when
// CUDNN_WARN_DEPRECATED is defined, which this build does not define.

#include <cudnn.h>

#include <cstdint>
#include <string>

namespace splitbrain::exec::cuda {

// `value` as an int for cuDNN/cuBLAS; KernelArgumentError naming `what` when it does not fit.
int checked_int(int64_t value, const std::string& what);

// A dense fp32 NCHW tensor.
class TensorDescriptor {
 public:
  TensorDescriptor(int64_t n, int64_t c, int64_t h, int64_t w);
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// Convolution weights [out, in/groups, kh, kw], fp32.
class FilterDescriptor {
 public:
  FilterDescriptor(int64_t out, int64_t in_per_group, int64_t kh, int64_t kw);
  ~FilterDescriptor();
  FilterDescriptor(const FilterDescriptor&) = delete;
  FilterDescriptor& operator=(const FilterDescriptor&) = delete;
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

// Cross-correlation (PyTorch's convolution) with symmetric padding, fp32 accumulation, `groups`
// groups.
class ConvolutionDescriptor {
 public:
  // `tf32`: CUDNN_DEFAULT_MATH (TF32 tensor cores allowed for fp32 data) instead of CUDNN_FMA_MATH.
  ConvolutionDescriptor(bool tf32, int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                        int64_t dilation_w, int64_t groups);
  ~ConvolutionDescriptor();
  ConvolutionDescriptor(const ConvolutionDescriptor&) = delete;
  ConvolutionDescriptor& operator=(const ConvolutionDescriptor&) = delete;
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

class PoolingDescriptor {
 public:
  PoolingDescriptor(cudnnPoolingMode_t mode, int64_t kernel_h, int64_t kernel_w, int64_t pad_h, int64_t pad_w,
                    int64_t stride_h, int64_t stride_w);
  ~PoolingDescriptor();
  PoolingDescriptor(const PoolingDescriptor&) = delete;
  PoolingDescriptor& operator=(const PoolingDescriptor&) = delete;
  cudnnPoolingDescriptor_t get() const { return desc_; }

 private:
  cudnnPoolingDescriptor_t desc_ = nullptr;
};

class ActivationDescriptor {
 public:
  explicit ActivationDescriptor(cudnnActivationMode_t mode);
  ~ActivationDescriptor();
  ActivationDescriptor(const ActivationDescriptor&) = delete;
  ActivationDescriptor& operator=(const ActivationDescriptor&) = delete;
  cudnnActivationDescriptor_t get() const { return desc_; }

 private:
  cudnnActivationDescriptor_t desc_ = nullptr;
};

}  // namespace splitbrain::exec::cuda
