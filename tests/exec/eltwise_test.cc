// relu and tanh-GELU against float64 formulas (PyTorch's nn.ReLU and
// nn.GELU(approximate='tanh')), including relu in place and backward from the output.

#include "exec/cpu/eltwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::Activation;
using testing::expect_close;
using testing::random_floats;

TEST(Relu, InPlaceForwardAndBackwardFromOutput) {
  CpuContext context;
  const int64_t n = 1001;
  ActivationKernel kernel(context, Activation::relu, n);
  const auto x = random_floats(static_cast<std::size_t>(n), 41, -3.0f, 3.0f);
  const auto dy = random_floats(static_cast<std::size_t>(n), 42);
  std::vector<double> y_ref(x.size()), dx_ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y_ref[i] = x[i] > 0 ? x[i] : 0.0;
    dx_ref[i] = x[i] > 0 ? dy[i] : 0.0;
  }
  std::vector<float> y = x;  // in place: the input is gone afterwards
  kernel.forward(y.data(), y.data());
  expect_close(y, y_ref, 1e-6, "y");
  std::vector<float> dx = dy;  // in place too
  kernel.backward(y.data(), dx.data(), dx.data());
  expect_close(dx, dx_ref, 1e-6, "dx");
}

TEST(GeluTanh, MatchesPytorchApproximateTanh) {
  CpuContext context;
  const int64_t n = 777;
  ActivationKernel kernel(context, Activation::gelu_tanh, n);
  const auto x = random_floats(static_cast<std::size_t>(n), 43, -5.0f, 5.0f);
  const auto dy = random_floats(static_cast<std::size_t>(n), 44);
  const double c = std::sqrt(2.0 / std::numbers::pi);
  std::vector<double> y_ref(x.size()), dx_ref(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double u = c * (v + 0.044715 * v * v * v);
    const double t = std::tanh(u);
    y_ref[i] = 0.5 * v * (1 + t);
    const double du = c * (1 + 3 * 0.044715 * v * v);
    dx_ref[i] = dy[i] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du);
  }
  std::vector<float> y(x.size()), dx(x.size());
  kernel.forward(x.data(), y.data());
  kernel.backward(x.data(), dy.data(), dx.data());
  expect_close(y, y_ref, 1e-5, "y");
  expect_close(dx, dx_ref, 1e-5, "dx");
}

}  // namespace
}  // namespace splitbrain::exec::cpu
