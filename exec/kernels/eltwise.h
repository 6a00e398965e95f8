#pragma once
// Activations over any local fp32 tensor (treated as a flat array).
//
//   relu        backward reads the OUTPUT y, so forward may run in place (x == y) and the input
//               need not be kept.
//   gelu_tanh   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GPT-2's GELU and PyTorch's
//               nn.GELU(approximate='tanh'). Backward reads the INPUT x.

#include <cstdint>

namespace splitbrain::exec::kernels {

enum class Activation { relu, gelu_tanh };

class ActivationKernel {
 public:
  virtual ~ActivationKernel() = default;
  virtual Activation kind() const = 0;
  virtual int64_t elements() const = 0;

  // y = f(x); x == y is allowed.
  virtual void forward(const float* x, float* y) = 0;
  // dx = f'(.) * dy, where `saved` is y for relu and x for gelu_tanh. dx == dy is allowed.
  virtual void backward(const float* saved, const float* dy, float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
