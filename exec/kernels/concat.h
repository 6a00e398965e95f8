#pragma once
// Concatenation of local fp32 tensors along one dimension (all other dims equal, rank 1 to 5),
// and its backward, the split of dy into the inputs' gradients.

#include <span>

#include "exec/kernels/dims.h"

namespace splitbrain::exec::kernels {

class ConcatKernel {
 public:
  virtual ~ConcatKernel() = default;
  virtual const Dims& output_dims() const = 0;

  virtual void forward(std::span<const float* const> xs, float* y) = 0;
  // dxs[i] (overwritten) = the slice of dy that input i gave.
  virtual void backward(const float* dy, std::span<float* const> dxs) const = 0;
};

}  // namespace splitbrain::exec::kernels
