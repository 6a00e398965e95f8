#pragma once
// Concatenation of local fp32 tensors along one dimension (all other dims equal, rank 1 to 5),
// and its backward, the split of dy into the inputs' gradients.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exec/kernels/dims.h"

namespace splitbrain::exec::kernels {

// Where each input lies in the concatenation, row-major: the output is `outer` runs of
// `output_run` floats, and in each run input i owns `runs[i]` floats from `starts[i]` (its
// dims[axis] x the dims after the axis).
struct ConcatGeometry {
  Dims output_dims;
  int64_t outer = 1;
  int64_t output_run = 0;
  std::vector<int64_t> runs;
  std::vector<int64_t> starts;
};

// Every backend's concatenation: throws KernelArgumentError ("ConcatKernel: ...") unless there
// is an input, `axis` indexes its dims, and all inputs have its rank and positive dims equal to
// its but along `axis`.
ConcatGeometry concat_geometry(std::span<const Dims> inputs, int axis);

// A concatenation of `built` inputs whose forward was given `given` inputs, or whose backward
// `given` gradients: KernelArgumentError unless they are equal.
void check_concat_inputs(std::size_t given, std::size_t built);
void check_concat_gradients(std::size_t given, std::size_t built);

class ConcatKernel {
 public:
  virtual ~ConcatKernel() = default;
  virtual const Dims& output_dims() const = 0;

  virtual void forward(std::span<const float* const> xs, float* y) = 0;
  // dxs[i] (overwritten) = the slice of dy that input i gave.
  virtual void backward(const float* dy, std::span<float* const> dxs) const = 0;
};

}  // namespace splitbrain::exec::kernels
