// RMS normalisation (exec/kernels/rms_norm.h) on the CPU in plain loops: oneDNN 2.6's layer
// normalisation always centres on the mean and has no RMS mode. Each row's sums are taken in
// double, so long rows lose nothing to fp32 accumulation; values stay fp32 in and out.

#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/rms_norm.h"

namespace splitbrain::exec::cpu {
namespace {

class RmsNormKernel final : public kernels::RmsNormKernel {
 public:
  explicit RmsNormKernel(const kernels::RmsNormShape& shape) : shape_(kernels::checked(shape)) {}
  const kernels::RmsNormShape& shape() const override { return shape_; }

  void forward(const float* x, const float* weight, float* y, float* inv_rms) override {
    const auto features = static_cast<std::size_t>(shape_.features);
    for (std::size_t r = 0; r < static_cast<std::size_t>(shape_.rows); ++r) {
      const float* xr = x + r * features;
      double squares = 0.0;
      for (std::size_t f = 0; f < features; ++f) squares += static_cast<double>(xr[f]) * xr[f];
      const auto inverse =
          static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(features) + shape_.epsilon));
      inv_rms[r] = inverse;
      for (std::size_t f = 0; f < features; ++f) y[r * features + f] = xr[f] * inverse * weight[f];
    }
  }

  void backward(const float* x, const float* dy, const float* weight, const float* inv_rms, float* dx,
                float* dweight) override {
    const auto features = static_cast<std::size_t>(shape_.features);
    // The weight gradient of all rows in double, then added once: micro-batches accumulate.
    weight_gradient_.assign(features, 0.0);
    for (std::size_t r = 0; r < static_cast<std::size_t>(shape_.rows); ++r) {
      const float* xr = x + r * features;
      const float* gr = dy + r * features;
      const double inverse = inv_rms[r];
      double sum_g_x = 0.0;  // g = dy * weight, the gradient of the normalised x
      for (std::size_t f = 0; f < features; ++f) {
        weight_gradient_[f] += static_cast<double>(gr[f]) * xr[f] * inverse;
        sum_g_x += static_cast<double>(gr[f]) * weight[f] * xr[f];
      }
      if (dx == nullptr) continue;
      // d(1/rms)/dx_f = -x_f / (features rms^3), so dx = r g - x r^3 sum(g x) / features.
      const double correction = inverse * inverse * sum_g_x / static_cast<double>(features);
      for (std::size_t f = 0; f < features; ++f) {
        const double g = static_cast<double>(gr[f]) * weight[f];
        dx[r * features + f] = static_cast<float>(inverse * (g - xr[f] * correction));
      }
    }
    for (std::size_t f = 0; f < features; ++f) dweight[f] += static_cast<float>(weight_gradient_[f]);
  }

 private:
  kernels::RmsNormShape shape_;
  std::vector<double> weight_gradient_;
};

}  // namespace

std::unique_ptr<kernels::RmsNormKernel> make_rms_norm(CpuContext& /*context*/, const kernels::RmsNormShape& shape) {
  return std::make_unique<RmsNormKernel>(shape);
}

}  // namespace splitbrain::exec::cpu
