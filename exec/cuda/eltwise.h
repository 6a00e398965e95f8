#pragma once
// Activations on the GPU over a flat fp32 array: the twin of cpu::ActivationKernel. relu is
// cuDNN's activation (backward reads the OUTPUT y, as on the CPU: cuDNN's relu backward gives
// the same mask from y as from x, so y is passed for both); gelu_tanh is an own kernel with the
// CPU formula (cuDNN's legacy activations have no tanh GELU), backward reads the INPUT x.
//
// Device arrays in and out (cuda_context.h): the calls queue cuDNN or the own kernel on the
// context's stream straight on the caller's pointers and return without waiting. x == y and
// dx == dy are allowed as on the CPU: cuDNN's activations take in-place calls when the tensor
// descriptors are the same (one descriptor here), and the own kernels read element i before
// writing it.

#include <cstdint>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/kernels/eltwise.h"

namespace splitbrain::exec::cuda {

class ActivationKernel final : public kernels::ActivationKernel {
 public:
  ActivationKernel(CudaContext& context, kernels::Activation kind, int64_t elements);
  kernels::Activation kind() const override { return kind_; }
  int64_t elements() const override { return elements_; }

  // y = f(x); x == y is allowed.
  void forward(const float* x, float* y) override;
  // dx = f'(.) * dy, where `saved` is y for relu and x for gelu_tanh. dx == dy is allowed.
  void backward(const float* saved, const float* dy, float* dx) override;

 private:
  CudaContext& context_;
  kernels::Activation kind_;
  int64_t elements_;
  TensorDescriptor desc_;  // [1, 1, 1, elements]
  ActivationDescriptor relu_;
};

}  // namespace splitbrain::exec::cuda
