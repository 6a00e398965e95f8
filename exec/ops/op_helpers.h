#pragma once
// Small pieces the ops share.

#include <cstdint>
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

// From host values [samples, positions] (one per position of each sample, as the data source
// gives labels and token ids), this rank's positions [first, first + count) of each sample, where
// the sequence is split; all of them, untouched, where it is not.
template <class T>
std::vector<T> own_positions(std::vector<T> all, int64_t samples, int64_t positions, int64_t first, int64_t count) {
  if (count == positions) return all;
  std::vector<T> mine;
  mine.reserve(static_cast<size_t>(samples * count));
  for (int64_t n = 0; n < samples; ++n) {
    const auto begin = all.begin() + n * positions + first;
    mine.insert(mine.end(), begin, begin + count);
  }
  return mine;
}

}  // namespace splitbrain::exec::ops
