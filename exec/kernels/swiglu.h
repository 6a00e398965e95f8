#pragma once
// SwiGLU's gate (Llama's feed-forward unit) over two local fp32 tensors of one shape:
// y = silu(gate) * up, silu(g) = g * sigmoid(g), element by element. Backward reads the saved
// gate and up (silu is recomputed, nothing else is kept):
//   d_gate = dy * up * silu'(g), silu'(g) = sigmoid(g) * (1 + g * (1 - sigmoid(g)))
//   d_up   = dy * silu(g)
//
// Elements are independent, so any split of the three tensors alike needs no communication
// (plans/op_rules/swiglu.cc). C++17, as the CUDA backend's .cu files include it.

#include <cstdint>
#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

// The element count, or KernelArgumentError naming it when every backend refuses it.
inline int64_t checked_swiglu_elements(int64_t elements) {
  if (elements <= 0)
    throw KernelArgumentError("SwigluKernel: elements " + std::to_string(elements) + " must be positive");
  return elements;
}

class SwigluKernel {
 public:
  virtual ~SwigluKernel() = default;
  virtual int64_t elements() const = 0;

  // y = silu(gate) * up; y may not alias gate or up (backward reads them).
  virtual void forward(const float* gate, const float* up, float* y) = 0;
  // d_gate and d_up are overwritten (the op asks for both or for neither).
  virtual void backward(const float* gate, const float* up, const float* dy, float* d_gate, float* d_up) = 0;
};

}  // namespace splitbrain::exec::kernels
