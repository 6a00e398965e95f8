#pragma once
// Small pieces the ops share.

#include <vector>

#include "exec/runtime/layer_op.h"
#include "model/op.h"

namespace splitbrain::exec::ops {

// Under a split contraction the output is a partial sum, so only the first rank of that group
// adds the bias: the others give their kernel none (and still compute the bias gradient, to stay
// replicas).
inline const float* bias_to_add(bool adds_bias, ConstTensorSpan bias) { return adds_bias ? bias.data() : nullptr; }

// Copies a window's kernel, stride and symmetric padding into a kernel shape (conv and pool
// shapes name these fields alike).
template <class KernelShape, class WindowAttrs>
void copy_window(const WindowAttrs& window, KernelShape& shape) {
  shape.kernel_h = window.kernel.h;
  shape.kernel_w = window.kernel.w;
  shape.stride_h = window.stride.h;
  shape.stride_w = window.stride.w;
  shape.pad_top = shape.pad_bottom = window.padding.h;
  shape.pad_left = shape.pad_right = window.padding.w;
}

}  // namespace splitbrain::exec::ops
