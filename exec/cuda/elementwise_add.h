#pragma once
// y = x_0 + x_1 + ... + x_{n-1} on the GPU: the twin of cpu::AddKernel. cuBLAS saxpy adds each
// input into the running sum in input order (the CPU's order). Backward needs no kernel (every
// input's gradient is dy).
//
// Device arrays in and out (cuda_context.h): the sum runs in y (x_0 copied there first), queued
// on the context's stream, and the call returns without waiting. y may be one of the inputs: as
// x_0 in place; as a later input, which the copy of x_0 would overwrite before it is added, the sum
// runs in the context's staging buffer and is copied to y at the end.

#include <cstdint>
#include <span>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/elementwise_add.h"

namespace splitbrain::exec::cuda {

class AddKernel final : public kernels::AddKernel {
 public:
  AddKernel(CudaContext& context, int inputs, int64_t elements);
  int inputs() const override { return inputs_; }
  int64_t elements() const override { return elements_; }

  // xs.size() must equal inputs(); y may be one of the inputs.
  void forward(std::span<const float* const> xs, float* y) override;

 private:
  CudaContext& context_;
  int inputs_;
  int64_t elements_;
};

}  // namespace splitbrain::exec::cuda
