#include "exec/kernels/conv2d.h"

namespace splitbrain::exec::kernels {

namespace {

int64_t out_extent(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_lo + pad_hi;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

}  // namespace

int64_t Conv2dShape::out_height() const {
  return out_extent(height, pad_top, pad_bottom, kernel_h, stride_h, dilation_h);
}
int64_t Conv2dShape::out_width() const {
  return out_extent(width, pad_left, pad_right, kernel_w, stride_w, dilation_w);
}

}  // namespace splitbrain::exec::kernels
