#pragma once
// Activations (exec/kernels/eltwise.h) with oneDNN eltwise primitives: relu's backward is
// oneDNN's relu_use_dst_for_bwd (it reads the output), gelu_tanh is eltwise_gelu_tanh.

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/eltwise.h"

namespace splitbrain::exec::cpu {

class ActivationKernel final : public kernels::ActivationKernel {
 public:
  ActivationKernel(CpuContext& context, kernels::Activation kind, int64_t elements);
  kernels::Activation kind() const override { return kind_; }
  int64_t elements() const override { return elements_; }

  void forward(const float* x, float* y) override;
  void backward(const float* saved, const float* dy, float* dx) override;

 private:
  CpuContext& context_;
  kernels::Activation kind_;
  int64_t elements_;
  dnnl::memory::desc md_;
  dnnl::eltwise_forward forward_;
  dnnl::eltwise_backward backward_;
};

}  // namespace splitbrain::exec::cpu
