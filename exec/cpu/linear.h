#pragma once
// Fully connected layer (exec/kernels/linear.h) with oneDNN's inner product on plain layouts
// (its GEMM-based implementation takes them as they are, so nothing is reordered); the
// accumulating weight gradient is one dnnl_sgemm with beta = 1.

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/linear.h"

namespace splitbrain::exec::cpu {

class LinearKernel final : public kernels::LinearKernel {
 public:
  LinearKernel(CpuContext& context, const kernels::LinearShape& shape);
  const kernels::LinearShape& shape() const override { return shape_; }

  void forward(const float* x, const float* w, const float* b, float* y) override;
  void backward_data(const float* dy, const float* w, float* dx) override;
  void backward_weights(const float* x, const float* dy, float* dw, float* db) override;
  void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) override;

 private:
  CpuContext& context_;
  kernels::LinearShape shape_;
  dnnl::memory::desc x_md_, w_md_, b_md_, y_md_;
  dnnl::inner_product_forward forward_;
  dnnl::inner_product_backward_data backward_data_;
  dnnl::inner_product_backward_weights backward_weights_;
  std::vector<float> zero_bias_;  // what a forward without a bias adds (the primitive has one)
};

}  // namespace splitbrain::exec::cpu
