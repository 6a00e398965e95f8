#pragma once
// Adaptive average pooling (PyTorch's AdaptiveAvgPool2d) on local NCHW fp32 tensors. PyTorch's
// bins [floor(i*H/out), ceil((i+1)*H/out)) vary in size and may overlap when H is not a multiple
// of the output size; the bin bounds below are shared so every backend draws the same bins.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct AdaptiveAvgPoolShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t out_height = 1;
  int64_t out_width = 1;
};

// Bin i of `out` over an extent `in`: [adaptive_bin_begin, adaptive_bin_end).
constexpr int64_t adaptive_bin_begin(int64_t i, int64_t in, int64_t out) { return i * in / out; }
constexpr int64_t adaptive_bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

class AdaptiveAvgPoolKernel {
 public:
  virtual ~AdaptiveAvgPoolKernel() = default;
  virtual const AdaptiveAvgPoolShape& shape() const = 0;

  // y [N, C, out_height, out_width] = the mean of each bin of x [N, C, H, W].
  virtual void forward(const float* x, float* y) = 0;
  // dx (overwritten) spreads each dy evenly over its bin; overlapping bins add.
  virtual void backward(const float* dy, float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
