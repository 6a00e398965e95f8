// The CPU SwigluKernel (through CpuKernelFactory, as the ops get it) against float64 loops: y,
// d_gate and d_up, with the float64 gradients checked by central differences of sum(y * dy), and
// against PyTorch (silu(gate) * up and its autograd gradients, tests/exec/golden/swiglu_pytorch.json
// from tools/pytorch_swiglu_reference.py).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using testing::expect_close;
using testing::random_floats;

double silu(double g) { return g / (1 + std::exp(-g)); }

TEST(Swiglu, MatchesFloat64ReferenceAndFiniteDifferences) {
  const std::size_t n = 1031;  // odd, so no loop relies on a multiple of a vector width
  const auto gate = random_floats(n, 81, -8.0f, 8.0f), up = random_floats(n, 82, -2.0f, 2.0f);
  const auto dy = random_floats(n, 83);
  std::vector<double> y_ref(n), d_gate_ref(n), d_up_ref(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gate[i], s = 1 / (1 + std::exp(-g));
    y_ref[i] = silu(g) * up[i];
    d_gate_ref[i] = dy[i] * up[i] * s * (1 + g * (1 - s));
    d_up_ref[i] = dy[i] * silu(g);
    // The analytic gradients against central differences of dy * silu(g) * u.
    const double h = 1e-6;
    EXPECT_NEAR(dy[i] * up[i] * (silu(g + h) - silu(g - h)) / (2 * h), d_gate_ref[i], 1e-7) << "d_gate[" << i << "]";
    EXPECT_NEAR(dy[i] * silu(g) * ((up[i] + h) - (up[i] - h)) / (2 * h), d_up_ref[i], 1e-7) << "d_up[" << i << "]";
  }
  CpuKernelFactory factory;
  const auto kernel = factory.make_swiglu(static_cast<int64_t>(n));
  EXPECT_EQ(kernel->elements(), static_cast<int64_t>(n));
  std::vector<float> y(n), d_gate(n), d_up(n);
  kernel->forward(gate.data(), up.data(), y.data());
  kernel->backward(gate.data(), up.data(), dy.data(), d_gate.data(), d_up.data());
  expect_close(y, y_ref, 1e-6, "y");
  expect_close(d_gate, d_gate_ref, 1e-6, "d_gate");
  expect_close(d_up, d_up_ref, 1e-6, "d_up");
}

std::vector<float> floats(const nlohmann::json& values) { return values.get<std::vector<float>>(); }
std::vector<double> doubles(const nlohmann::json& values) { return values.get<std::vector<double>>(); }

TEST(Swiglu, MatchesPytorchSiluTimesUp) {
  std::ifstream file(SPLITBRAIN_SWIGLU_GOLDEN_FILE);
  ASSERT_TRUE(file.good()) << SPLITBRAIN_SWIGLU_GOLDEN_FILE;
  const nlohmann::json golden = nlohmann::json::parse(file);
  // The inputs are fp32 values written exactly, so the kernel sees what PyTorch saw.
  const std::vector<float> gate = floats(golden.at("gate")), up = floats(golden.at("up")), dy = floats(golden.at("dy"));
  ASSERT_EQ(up.size(), gate.size());
  ASSERT_EQ(dy.size(), gate.size());
  CpuKernelFactory factory;
  const auto kernel = factory.make_swiglu(static_cast<int64_t>(gate.size()));
  std::vector<float> y(gate.size()), d_gate(gate.size()), d_up(gate.size());
  kernel->forward(gate.data(), up.data(), y.data());
  kernel->backward(gate.data(), up.data(), dy.data(), d_gate.data(), d_up.data());
  expect_close(y, doubles(golden.at("y")), 1e-6, "y");
  expect_close(d_gate, doubles(golden.at("d_gate")), 1e-6, "d_gate");
  expect_close(d_up, doubles(golden.at("d_up")), 1e-6, "d_up");
  // Saturated gates: silu(-30) is -30 e^-30 (no NaN from exp overflow), silu(30) is 30.
  for (std::size_t i = 0; i < gate.size(); ++i) {
    EXPECT_TRUE(std::isfinite(y[i]) && std::isfinite(d_gate[i]) && std::isfinite(d_up[i])) << "element " << i;
  }
}

TEST(Swiglu, RefusesNoElements) {
  CpuKernelFactory factory;
  EXPECT_THROW(factory.make_swiglu(0), kernels::KernelArgumentError);
  EXPECT_THROW(factory.make_swiglu(-4), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
