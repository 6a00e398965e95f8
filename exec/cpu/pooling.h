#pragma once
// Max and average pooling (exec/kernels/pooling.h) with oneDNN's pooling primitives. Average
// pooling is oneDNN's pooling_avg_include_padding; max pooling's workspace is oneDNN's. For max
// pooling, ceil_mode's extra window is extra bottom/right padding. Average pooling does not take
// ceil_mode when the last window would hang over the padded input (PyTorch then divides by the
// clipped window, oneDNN by the whole one): KernelArgumentError.

#include <cstddef>
#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/pooling.h"

namespace splitbrain::exec::cpu {

class Pool2dKernel final : public kernels::Pool2dKernel {
 public:
  Pool2dKernel(CpuContext& context, kernels::PoolKind kind, const kernels::Pool2dShape& shape);
  const kernels::Pool2dShape& shape() const override { return shape_; }
  kernels::PoolKind kind() const override { return kind_; }

  std::size_t workspace_bytes() const override;
  void forward(const float* x, float* y, void* workspace) override;
  void backward(const float* dy, const void* workspace, float* dx) override;

 private:
  CpuContext& context_;
  kernels::PoolKind kind_;
  kernels::Pool2dShape shape_;
  dnnl::memory::desc x_md_, y_md_, workspace_md_;
  dnnl::pooling_forward forward_;
  dnnl::pooling_backward backward_;
};

}  // namespace splitbrain::exec::cpu
