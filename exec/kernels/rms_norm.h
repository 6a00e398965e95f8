#pragma once
// RMS normalisation over the last dimension (torch.nn.RMSNorm(features), Llama's RMSNorm) of a
// local [rows, features] fp32 tensor (rows = N*T): y = x / sqrt(mean(x^2) + eps) * weight, with
// a learned scale and no shift. Forward keeps each row's 1/rms in a caller buffer of `rows`
// floats for backward.
//
// Rows are independent, so splitting the batch or the sequence needs no communication; the
// features are never split (plans/op_rules/rms_norm.cc: no `out` role). C++17, as the CUDA
// backend's .cu files include it.

#include <cstdint>
#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

struct RmsNormShape {
  int64_t rows = 1;
  int64_t features = 1;
  double epsilon = 1e-5;
};

// The shape, or KernelArgumentError naming the field every backend refuses.
inline const RmsNormShape& checked(const RmsNormShape& s) {
  if (!(s.rows > 0 && s.features > 0 && s.epsilon > 0))
    throw KernelArgumentError("RmsNormKernel: rows " + std::to_string(s.rows) + " and features " +
                              std::to_string(s.features) + " must be positive, epsilon > 0");
  return s;
}

class RmsNormKernel {
 public:
  virtual ~RmsNormKernel() = default;
  virtual const RmsNormShape& shape() const = 0;

  // y = x * inv_rms * weight, with inv_rms[r] = 1 / sqrt(mean over the row of x^2 + eps) written.
  virtual void forward(const float* x, const float* weight, float* y, float* inv_rms) = 0;
  // From the saved x and inv_rms, with g = dy * weight: dx = inv_rms (g - x inv_rms^2 mean(g x))
  // (overwritten; may be null when no input gradient is wanted), and dweight += sum over rows of
  // dy x inv_rms, ADDED into so micro-batches accumulate in the kernel.
  virtual void backward(const float* x, const float* dy, const float* weight, const float* inv_rms, float* dx,
                        float* dweight) = 0;
};

}  // namespace splitbrain::exec::kernels
