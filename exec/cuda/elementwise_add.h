#pragma once
// y = x_0 + x_1 + ... + x_{n-1} on the GPU: the twin of cpu::AddKernel. cuBLAS saxpy adds each
// input into the running sum in input order (the CPU's order). Backward needs no kernel (every
// input's gradient is dy).
//
// Host or device arrays in and out (see cuda_context.h): every call uploads its inputs into the device
// buffers this object allocates once (the sum and one input at a time), runs on the context's
// stream and synchronises; so y may be one of the inputs.

#include <cstdint>
#include <span>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/device_buffer.h"
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
  DeviceBuffer sum_;
  DeviceBuffer addend_;
};

}  // namespace splitbrain::exec::cuda
