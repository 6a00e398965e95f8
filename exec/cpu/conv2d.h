#pragma once
// 2-D convolution (exec/kernels/conv2d.h) with oneDNN's convolution primitives, in the layouts
// oneDNN picks (reorders built once, staged_memory.h).

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/conv2d.h"

namespace splitbrain::exec::cpu {

class Conv2dKernel final : public kernels::Conv2dKernel {
 public:
  // Throws KernelArgumentError on shapes that do not make sense (channels not divisible by the
  // groups, empty output, ...), DnnlError when oneDNN refuses.
  Conv2dKernel(CpuContext& context, const kernels::Conv2dShape& shape);

  const kernels::Conv2dShape& shape() const override { return shape_; }
  void forward(const float* x, const float* w, const float* b, float* y) override;
  void backward_data(const float* dy, const float* w, float* dx) override;
  void backward_weights(const float* x, const float* dy, float* dw, float* db) override;
  void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) override;

 private:
  CpuContext& context_;
  kernels::Conv2dShape shape_;
  dnnl::memory::desc bias_md_;

  dnnl::convolution_forward forward_;
  StagedMemory fwd_x_, fwd_w_, fwd_y_;
  dnnl::convolution_backward_data backward_data_;
  StagedMemory bwd_dy_, bwd_w_, bwd_dx_;
  dnnl::convolution_backward_weights backward_weights_;
  StagedMemory bww_x_, bww_dy_, bww_dw_;
  // oneDNN's backward weights cannot add into its output: accumulate_weight_gradients writes
  // here first. And what a forward without a bias adds (the primitive has one).
  std::vector<float> fresh_dw_, fresh_db_, zero_bias_;
};

}  // namespace splitbrain::exec::cpu
