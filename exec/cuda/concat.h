#pragma once
// Concatenation along one dimension and its split on the GPU: the twin of cpu::ConcatKernel.
// Row-major, the output is `outer` runs in which input i owns a contiguous piece of
// dims_i[axis] * inner elements, so each input is one pitched 2-D copy (cudaMemcpy2DAsync) into
// its columns of the output, and the split copies each input's columns of dy back out. No own
// kernel.
//
// Device arrays in and out (cuda_context.h): the copies go device to device between the caller's
// pointers, queued on the context's stream, and the calls return without waiting.

#include <cstdint>
#include <span>
#include <vector>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/concat.h"

namespace splitbrain::exec::cuda {

class ConcatKernel final : public kernels::ConcatKernel {
 public:
  // `input_dims` are the full local shapes (batch included); `axis` indexes them.
  ConcatKernel(CudaContext& context, std::vector<kernels::Dims> input_dims, int axis);
  const kernels::Dims& output_dims() const override { return geometry_.output_dims; }

  void forward(std::span<const float* const> xs, float* y) override;
  // dxs[i] (overwritten) = the slice of dy that input i gave.
  void backward(const float* dy, std::span<float* const> dxs) const override;

 private:
  CudaContext& context_;
  kernels::ConcatGeometry geometry_;  // one run and start per input
};

}  // namespace splitbrain::exec::cuda
