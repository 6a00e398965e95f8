#pragma once
// Activations over any local fp32 tensor (treated as a flat array), oneDNN eltwise primitives.
//
//   relu        backward reads the OUTPUT y (oneDNN's relu_use_dst_for_bwd), so forward may run
//               in place (x == y) and the input need not be kept.
//   gelu_tanh   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GPT-2's GELU and PyTorch's
//               nn.GELU(approximate='tanh'), oneDNN's eltwise_gelu_tanh. Backward reads the
//               INPUT x.

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

enum class Activation { relu, gelu_tanh };

class ActivationKernel {
 public:
  ActivationKernel(CpuContext& context, Activation kind, int64_t elements);
  Activation kind() const { return kind_; }
  int64_t elements() const { return elements_; }

  // y = f(x); x == y is allowed.
  void forward(const float* x, float* y);
  // dx = f'(.) * dy, where `saved` is y for relu and x for gelu_tanh. dx == dy is allowed.
  void backward(const float* saved, const float* dy, float* dx);

 private:
  CpuContext& context_;
  Activation kind_;
  int64_t elements_;
  dnnl::memory::desc md_;
  dnnl::eltwise_forward forward_;
  dnnl::eltwise_backward backward_;
};

}  // namespace splitbrain::exec::cpu
