#pragma once
// Concatenation and its split (exec/kernels/concat.h). Forward is oneDNN's concat primitive;
// the split is own code (oneDNN has no split primitive): per input, `outer` copies of one
// contiguous run each.

#include <span>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/concat.h"

namespace splitbrain::exec::cpu {

class ConcatKernel final : public kernels::ConcatKernel {
 public:
  // `input_dims` are the full local shapes (batch included); `axis` indexes them.
  ConcatKernel(CpuContext& context, std::vector<kernels::Dims> input_dims, int axis);
  const kernels::Dims& output_dims() const override { return geometry_.output_dims; }

  void forward(std::span<const float* const> xs, float* y) override;
  void backward(const float* dy, std::span<float* const> dxs) const override;

 private:
  CpuContext& context_;
  kernels::ConcatGeometry geometry_;
  std::vector<dnnl::memory::desc> input_mds_;
  dnnl::memory::desc output_md_;
  dnnl::concat concat_;
};

}  // namespace splitbrain::exec::cpu
