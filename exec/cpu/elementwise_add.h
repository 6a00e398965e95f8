#pragma once
// y = x_0 + x_1 + ... + x_{n-1} over local fp32 tensors of equal shape (residual connections):
// oneDNN's sum primitive. Backward needs no kernel: every input's gradient is dy itself, so the
// runtime passes the same buffer on (or adds it into a gradient it accumulates).

#include <cstdint>
#include <span>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

class AddKernel {
 public:
  AddKernel(CpuContext& context, int inputs, int64_t elements);
  int inputs() const { return inputs_; }
  int64_t elements() const { return elements_; }

  // xs.size() must equal inputs(); y may be one of the inputs.
  void forward(std::span<const float* const> xs, float* y);

 private:
  CpuContext& context_;
  int inputs_;
  int64_t elements_;
  dnnl::memory::desc md_;
  dnnl::sum sum_;
};

}  // namespace splitbrain::exec::cpu
