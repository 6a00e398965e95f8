#pragma once
// Fully connected layer (PyTorch's nn.Linear): y = x W^T + b over the last dimension, with x as
// [rows, in_features] (rows = N, or N*T for sequences), W [out_features, in_features], b
// [out_features]. oneDNN inner product, forward and both backward passes, on plain layouts
// (its GEMM-based implementation takes them as they are, so nothing is reordered).

#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

struct LinearShape {
  int64_t rows = 1;
  int64_t in_features = 1;
  int64_t out_features = 1;
  bool bias = true;
};

class LinearKernel {
 public:
  LinearKernel(CpuContext& context, const LinearShape& shape);
  const LinearShape& shape() const { return shape_; }

  // y = x W^T + b (b ignored without bias).
  void forward(const float* x, const float* w, const float* b, float* y);
  // dx = dy W.
  void backward_data(const float* dy, const float* w, float* dx);
  // dW = dy^T x, db = column sums of dy (overwritten).
  void backward_weights(const float* x, const float* dy, float* dw, float* db);
  // dW += dy^T x, db += column sums of dy (db may be null): the training step's accumulation,
  // straight into the gradient (one GEMM with beta = 1), with no temporary and no extra pass.
  void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db);

 private:
  CpuContext& context_;
  LinearShape shape_;
  dnnl::memory::desc x_md_, w_md_, b_md_, y_md_;
  dnnl::inner_product_forward forward_;
  dnnl::inner_product_backward_data backward_data_;
  dnnl::inner_product_backward_weights backward_weights_;
};

}  // namespace splitbrain::exec::cpu
