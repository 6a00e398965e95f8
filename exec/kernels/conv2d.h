#pragma once
// 2-D convolution (PyTorch's nn.Conv2d) on local NCHW fp32 tensors, forward and both backward
// passes. Weights are [out_channels, in_channels/groups, kernel_h, kernel_w], bias
// [out_channels]. Padding is given per side: a height-split convolution receives its input
// already extended by the halo rows and pads only the sides that are edges of the global image
// (top on the first rank, bottom on the last).

#include <cstdint>

#include "plans/kernel_problem.h"

namespace splitbrain::exec::kernels {

// The problem is declared once, in plans/, where the simulator prices the same one.
using Conv2dShape = plans::ConvProblem;

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
