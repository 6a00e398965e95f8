#pragma once
// Fully connected layer (PyTorch's nn.Linear): y = x W^T + b over the last dimension, with x as
// [rows, in_features] (rows = N, or N*T for sequences), W [out_features, in_features], b
// [out_features]. Forward and both backward passes.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct LinearShape {
  int64_t rows = 1;
  int64_t in_features = 1;
  int64_t out_features = 1;
  bool bias = true;
};

class LinearKernel {
 public:
  virtual ~LinearKernel() = default;
  virtual const LinearShape& shape() const = 0;

  // y = x W^T + b. With a null `b` no bias is added (a rank holding a partial sum, or a shape
  // without bias).
  virtual void forward(const float* x, const float* w, const float* b, float* y) = 0;
  // dx = dy W.
  virtual void backward_data(const float* dy, const float* w, float* dx) = 0;
  // dW = dy^T x, db = column sums of dy (overwritten).
  virtual void backward_weights(const float* x, const float* dy, float* dw, float* db) = 0;
  // dW += dy^T x, db += column sums of dy (db may be null): the training step's accumulation
  // over micro-batches, straight into the gradient, so a backend can fuse it into its GEMM
  // (beta = 1) with no temporary and no extra pass.
  virtual void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) = 0;
};

}  // namespace splitbrain::exec::kernels
