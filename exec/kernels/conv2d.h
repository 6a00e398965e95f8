#pragma once
// 2-D convolution (PyTorch's nn.Conv2d) on local NCHW fp32 tensors, forward and both backward
// passes. Weights are [out_channels, in_channels/groups, kernel_h, kernel_w], bias
// [out_channels]. Padding is given per side: a height-split convolution receives its input
// already extended by the halo rows and pads only the sides that are edges of the global image
// (top on the first rank, bottom on the last).

#include <cstdint>

namespace splitbrain::exec::kernels {

struct Conv2dShape {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t out_channels = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_top = 0;
  int64_t pad_bottom = 0;
  int64_t pad_left = 0;
  int64_t pad_right = 0;
  int64_t dilation_h = 1;  // PyTorch's convention: 1 = dense (oneDNN counts the gaps: 0)
  int64_t dilation_w = 1;
  int64_t groups = 1;
  bool bias = true;

  int64_t out_height() const;  // floor((H + pads - dilation*(k-1) - 1) / stride) + 1
  int64_t out_width() const;
};

// Built once per layer for one shape. Implementations throw KernelArgumentError on shapes that
// do not make sense (channels not divisible by the groups, empty output, ...).
class Conv2dKernel {
 public:
  virtual ~Conv2dKernel() = default;
  virtual const Conv2dShape& shape() const = 0;

  // y = conv(x, w) + b. With a null `b` no bias is added (a rank holding a partial sum, or a
  // shape without bias).
  virtual void forward(const float* x, const float* w, const float* b, float* y) = 0;
  // dx = the input gradient for the output gradient dy (overwrites dx).
  virtual void backward_data(const float* dy, const float* w, float* dx) = 0;
  // dw (and db with bias) for input x and output gradient dy (overwritten, not accumulated).
  virtual void backward_weights(const float* x, const float* dy, float* dw, float* db) = 0;
  // dw += the weight gradient, db += the bias gradient (db may be null): the step's accumulation
  // over micro-batches, in the kernel so a backend can fuse it (cuDNN's beta = 1).
  virtual void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) = 0;
};

}  // namespace splitbrain::exec::kernels
