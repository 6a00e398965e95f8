// SwiGLU's gate (exec/kernels/swiglu.h) on the CPU in plain loops: one pass each way, which is
// what oneDNN 2.6's swish eltwise followed by a binary multiply would take two passes (and a
// temporary) for. Sigmoid is taken in double so large |gate| neither overflows exp nor loses
// the small tail; values stay fp32 in and out.

#include <cmath>
#include <cstddef>
#include <memory>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/swiglu.h"

namespace splitbrain::exec::cpu {
namespace {

double sigmoid(double g) {
  // exp of a non-positive argument only: no overflow at either end.
  if (g >= 0) return 1.0 / (1.0 + std::exp(-g));
  const double e = std::exp(g);
  return e / (1.0 + e);
}

class SwigluKernel final : public kernels::SwigluKernel {
 public:
  explicit SwigluKernel(int64_t elements) : elements_(kernels::checked_swiglu_elements(elements)) {}
  int64_t elements() const override { return elements_; }

  void forward(const float* gate, const float* up, float* y) override {
    for (std::size_t i = 0; i < static_cast<std::size_t>(elements_); ++i) {
      const double g = gate[i];
      y[i] = static_cast<float>(g * sigmoid(g) * up[i]);
    }
  }

  void backward(const float* gate, const float* up, const float* dy, float* d_gate, float* d_up) override {
    for (std::size_t i = 0; i < static_cast<std::size_t>(elements_); ++i) {
      const double g = gate[i];
      const double s = sigmoid(g);
      const double silu_derivative = s * (1.0 + g * (1.0 - s));
      d_gate[i] = static_cast<float>(static_cast<double>(dy[i]) * up[i] * silu_derivative);
      d_up[i] = static_cast<float>(static_cast<double>(dy[i]) * g * s);
    }
  }

 private:
  int64_t elements_;
};

}  // namespace

std::unique_ptr<kernels::SwigluKernel> make_swiglu(CpuContext& /*context*/, int64_t elements) {
  return std::make_unique<SwigluKernel>(elements);
}

}  // namespace splitbrain::exec::cpu
