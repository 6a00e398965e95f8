#pragma once
// Adaptive average pooling (PyTorch's AdaptiveAvgPool2d) on local NCHW fp32 tensors. Own code:
// PyTorch's bins [floor(i*H/out), ceil((i+1)*H/out)) vary in size and may overlap when H is not a
// multiple of the output size, which one oneDNN pooling window/stride cannot express; the op is
// small (mostly global average pooling before the classifier) and bandwidth-bound anyway.

#include <cstdint>

namespace splitbrain::exec::cpu {

struct AdaptiveAvgPoolShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t out_height = 1;
  int64_t out_width = 1;
};

// y [N, C, out_height, out_width] = the mean of each bin of x [N, C, H, W].
void adaptive_avgpool_forward(const AdaptiveAvgPoolShape& shape, const float* x, float* y);
// dx (overwritten) spreads each dy evenly over its bin; overlapping bins add.
void adaptive_avgpool_backward(const AdaptiveAvgPoolShape& shape, const float* dy, float* dx);

}  // namespace splitbrain::exec::cpu
