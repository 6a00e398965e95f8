// The CPU RmsNormKernel (through CpuKernelFactory, as the ops get it) against float64 loops: y,
// the saved 1/rms, dx and dweight, with the float64 gradients themselves checked by central
// differences of the loss sum(y * dy).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::RmsNormShape;
using testing::expect_close;
using testing::random_floats;

// y of one row in float64: x / sqrt(mean(x^2) + eps) * weight.
std::vector<double> reference_row(const std::vector<double>& x, const std::vector<float>& weight, double epsilon) {
  double squares = 0;
  for (double v : x) squares += v * v;
  const double inverse = 1 / std::sqrt(squares / static_cast<double>(x.size()) + epsilon);
  std::vector<double> y(x.size());
  for (std::size_t f = 0; f < x.size(); ++f) y[f] = x[f] * inverse * weight[f];
  return y;
}

TEST(RmsNorm, MatchesFloat64ReferenceAndFiniteDifferences) {
  for (const RmsNormShape s : {RmsNormShape{6, 32, 1e-5}, RmsNormShape{7, 13, 1e-6}, RmsNormShape{1, 1, 1e-3}}) {
    SCOPED_TRACE("rows " + std::to_string(s.rows) + " features " + std::to_string(s.features));
    const auto rows = static_cast<std::size_t>(s.rows), d = static_cast<std::size_t>(s.features);
    const auto x = random_floats(rows * d, 71, -2.0f, 3.0f), dy = random_floats(rows * d, 72);
    const auto weight = random_floats(d, 73, 0.5f, 1.5f);
    std::vector<double> y_ref(rows * d), dx_ref(rows * d), dw_ref(d, 0.0), inv_ref(rows);
    // dx is the difference of two terms of about 1/rms * dy * weight, which may nearly cancel (one
    // feature: y hardly moves with x); its error is relative to those terms, per row.
    std::vector<double> dx_scale(rows, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      double squares = 0;
      for (std::size_t f = 0; f < d; ++f) squares += static_cast<double>(x[r * d + f]) * x[r * d + f];
      const double inverse = 1 / std::sqrt(squares / static_cast<double>(d) + s.epsilon);
      inv_ref[r] = inverse;
      double sum_g_x = 0;  // g = dy * weight
      for (std::size_t f = 0; f < d; ++f) {
        y_ref[r * d + f] = x[r * d + f] * inverse * weight[f];
        dw_ref[f] += static_cast<double>(dy[r * d + f]) * x[r * d + f] * inverse;
        sum_g_x += static_cast<double>(dy[r * d + f]) * weight[f] * x[r * d + f];
      }
      for (std::size_t f = 0; f < d; ++f) {
        const double g = static_cast<double>(dy[r * d + f]) * weight[f];
        dx_ref[r * d + f] = inverse * g - x[r * d + f] * inverse * inverse * inverse * sum_g_x / static_cast<double>(d);
        dx_scale[r] = std::max(dx_scale[r], std::abs(inverse * g));
      }
      // The analytic dx of this row against central differences of sum(y * dy).
      const std::vector<double> xr(x.begin() + static_cast<std::ptrdiff_t>(r * d),
                                   x.begin() + static_cast<std::ptrdiff_t>((r + 1) * d));
      for (std::size_t f = 0; f < d; ++f) {
        const double h = 1e-6;
        std::vector<double> up = xr, down = xr;
        up[f] += h, down[f] -= h;
        const std::vector<double> y_up = reference_row(up, weight, s.epsilon);
        const std::vector<double> y_down = reference_row(down, weight, s.epsilon);
        double loss_up = 0, loss_down = 0;
        for (std::size_t j = 0; j < d; ++j) loss_up += y_up[j] * dy[r * d + j], loss_down += y_down[j] * dy[r * d + j];
        EXPECT_NEAR((loss_up - loss_down) / (2 * h), dx_ref[r * d + f], 1e-6) << "row " << r << " feature " << f;
      }
    }
    CpuKernelFactory factory;
    const auto kernel = factory.make_rms_norm(s);
    EXPECT_EQ(kernel->shape().features, s.features);
    std::vector<float> y(rows * d), inv(rows), dx(rows * d), dweight(d, 0.0f);
    kernel->forward(x.data(), weight.data(), y.data(), inv.data());
    kernel->backward(x.data(), dy.data(), weight.data(), inv.data(), dx.data(), dweight.data());
    expect_close(y, y_ref, 1e-5, "y");
    expect_close(inv, inv_ref, 1e-6, "1/rms");
    for (std::size_t i = 0; i < rows * d; ++i)
      EXPECT_NEAR(dx[i], dx_ref[i], 1e-5 * std::max(dx_scale[i / d], 1e-3)) << "dx[" << i << "]";
    expect_close(dweight, dw_ref, 1e-5, "dweight");
    // A second micro-batch's weight gradient adds to the first's; without dx, none is written.
    kernel->backward(x.data(), dy.data(), weight.data(), inv.data(), nullptr, dweight.data());
    for (auto& v : dw_ref) v *= 2;
    expect_close(dweight, dw_ref, 1e-5, "dweight accumulated");
  }
}

TEST(RmsNorm, WeightOfOnesGivesUnitRootMeanSquare) {
  // With weight 1 (its initial value) every output row has root mean square 1 (up to eps).
  const RmsNormShape s{3, 64, 1e-8};
  CpuKernelFactory factory;
  const auto kernel = factory.make_rms_norm(s);
  const auto x = random_floats(3 * 64, 74, -5.0f, 5.0f);
  const std::vector<float> ones(64, 1.0f);
  std::vector<float> y(3 * 64), inv(3);
  kernel->forward(x.data(), ones.data(), y.data(), inv.data());
  for (std::size_t r = 0; r < 3; ++r) {
    double squares = 0;
    for (std::size_t f = 0; f < 64; ++f) squares += static_cast<double>(y[r * 64 + f]) * y[r * 64 + f];
    EXPECT_NEAR(std::sqrt(squares / 64), 1.0, 1e-5) << "row " << r;
  }
}

TEST(RmsNorm, RefusesEmptyShapesAndEpsilonZero) {
  CpuKernelFactory factory;
  EXPECT_THROW(factory.make_rms_norm(RmsNormShape{0, 8, 1e-5}), kernels::KernelArgumentError);
  EXPECT_THROW(factory.make_rms_norm(RmsNormShape{4, 0, 1e-5}), kernels::KernelArgumentError);
  EXPECT_THROW(factory.make_rms_norm(RmsNormShape{4, 8, 0.0}), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
