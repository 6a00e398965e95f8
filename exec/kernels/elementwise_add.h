#pragma once
// y = x_0 + x_1 + ... + x_{n-1} over local fp32 tensors of equal shape (residual connections).
// Backward needs no kernel: every input's gradient is dy itself, so the op passes the same
// buffer on.

#include <cstdint>
#include <span>

namespace splitbrain::exec::kernels {

class AddKernel {
 public:
  virtual ~AddKernel() = default;
  virtual int inputs() const = 0;
  virtual int64_t elements() const = 0;

  // xs.size() must equal inputs(); y may be one of the inputs.
  virtual void forward(std::span<const float* const> xs, float* y) = 0;
};

}  // namespace splitbrain::exec::kernels
