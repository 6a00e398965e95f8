#pragma once
// Layer normalisation over the last dimension (PyTorch's nn.LayerNorm(features)) of a local
// [rows, features] fp32 tensor (rows = N*T), with learned scale (gamma) and shift (beta).
// Forward keeps each row's mean and variance (biased) in caller buffers of `rows` floats for
// backward.
//
// Rows are independent, so splitting the batch or the sequence needs no communication; the
// features are never split (plans/op_sharding: no `out` role for layernorm).

#include <cstdint>

namespace splitbrain::exec::kernels {

struct LayerNormShape {
  int64_t rows = 1;
  int64_t features = 1;
  double epsilon = 1e-5;
};

class LayerNormKernel {
 public:
  virtual ~LayerNormKernel() = default;
  virtual const LayerNormShape& shape() const = 0;

  // y = (x - mean) / sqrt(var + eps) * gamma + beta; writes mean[rows] and variance[rows].
  virtual void forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* variance) = 0;
  // From the saved x, mean and variance: dx (overwritten; may be null when no input gradient is
  // wanted), and dgamma and dbeta ADDED into, so micro-batches accumulate in the kernel.
  virtual void backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* variance,
                        float* dx, float* dgamma, float* dbeta) = 0;
};

}  // namespace splitbrain::exec::kernels
