#include "exec/kernels/pooling.h"

namespace splitbrain::exec::kernels {

namespace {

// PyTorch's window count: floor or ceil of (padded - kernel) / stride, plus one; with ceil the
// last window must still start inside the input or the leading padding.
int64_t out_extent(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, bool ceil_mode) {
  const int64_t room = in + pad_lo + pad_hi - kernel;
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
  return out;
}

}  // namespace

int64_t Pool2dShape::out_height() const {
  return out_extent(height, pad_top, pad_bottom, kernel_h, stride_h, ceil_mode);
}
int64_t Pool2dShape::out_width() const { return out_extent(width, pad_left, pad_right, kernel_w, stride_w, ceil_mode); }

}  // namespace splitbrain::exec::kernels
