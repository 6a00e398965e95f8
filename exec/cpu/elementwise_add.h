#pragma once
// The sum of n equal-shaped tensors (exec/kernels/elementwise_add.h): oneDNN's sum primitive.

#include <cstdint>
#include <span>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/elementwise_add.h"

namespace splitbrain::exec::cpu {

class AddKernel final : public kernels::AddKernel {
 public:
  AddKernel(CpuContext& context, int inputs, int64_t elements);
  int inputs() const override { return inputs_; }
  int64_t elements() const override { return elements_; }

  void forward(std::span<const float* const> xs, float* y) override;

 private:
  CpuContext& context_;
  int inputs_;
  int64_t elements_;
  dnnl::memory::desc md_;
  dnnl::sum sum_;
};

}  // namespace splitbrain::exec::cpu
