// The CPU MoeKernel (through CpuKernelFactory, as the ops get it) against float64 loops written
// from the definition (exec/kernels/moe.h): the output, and every gradient by central differences
// of sum(y * dy) in float64, the routing held as forward chose it (the choice has no gradient).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/moe.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using testing::expect_close;
using testing::random_floats;
using testing::to_double;

// Seven tokens over 4 experts, top 2: the experts get groups of different sizes.
const kernels::MoeShape kShape{.tokens = 7, .features = 6, .experts = 4, .top_k = 2, .ffn = 5};

struct Weights {
  std::vector<double> x, router, w1, w3, w2;
};

double silu(double g) { return g / (1 + std::exp(-g)); }

// y from the definition in float64, with the experts chosen as `chosen` says (token-major,
// top_k each); fills `chosen` when it is empty.
std::vector<double> reference_forward(const kernels::MoeShape& s, const Weights& w, std::vector<int64_t>& chosen) {
  const bool choose = chosen.empty();
  if (choose) chosen.resize(static_cast<size_t>(s.tokens * s.top_k));
  std::vector<double> y(static_cast<size_t>(s.tokens * s.features), 0.0);
  for (int64_t t = 0; t < s.tokens; ++t) {
    std::vector<double> p(static_cast<size_t>(s.experts));
    double largest = -1e300, sum = 0.0;
    for (int64_t e = 0; e < s.experts; ++e) {
      double logit = 0.0;
      for (int64_t f = 0; f < s.features; ++f) logit += w.x[t * s.features + f] * w.router[e * s.features + f];
      p[e] = logit;
      largest = std::max(largest, logit);
    }
    for (double& v : p) sum += (v = std::exp(v - largest));
    for (double& v : p) v /= sum;
    int64_t* picked = chosen.data() + t * s.top_k;
    if (choose) {
      const std::vector<float> p_float(p.begin(), p.end());
      kernels::choose_top_experts(p_float.data(), s.experts, s.top_k, picked);
    }
    double kept_sum = 0.0;
    for (int64_t j = 0; j < s.top_k; ++j) kept_sum += p[picked[j]];
    for (int64_t j = 0; j < s.top_k; ++j) {
      const int64_t e = picked[j];
      const double weight = p[e] / kept_sum;
      std::vector<double> h(static_cast<size_t>(s.ffn));
      for (int64_t i = 0; i < s.ffn; ++i) {
        double g = 0.0, u = 0.0;
        for (int64_t f = 0; f < s.features; ++f) {
          g += w.x[t * s.features + f] * w.w1[(e * s.ffn + i) * s.features + f];
          u += w.x[t * s.features + f] * w.w3[(e * s.ffn + i) * s.features + f];
        }
        h[i] = silu(g) * u;
      }
      for (int64_t f = 0; f < s.features; ++f) {
        double o = 0.0;
        for (int64_t i = 0; i < s.ffn; ++i) o += h[i] * w.w2[(e * s.features + f) * s.ffn + i];
        y[t * s.features + f] += weight * o;
      }
    }
  }
  return y;
}

// d sum(y * dy) / d tensor, by central differences with the routing held.
std::vector<double> finite_difference(const kernels::MoeShape& s, Weights w, std::vector<double> Weights::*tensor,
                                      const std::vector<double>& dy, std::vector<int64_t> chosen) {
  constexpr double kStep = 1e-6;
  std::vector<double> gradient((w.*tensor).size());
  for (size_t i = 0; i < gradient.size(); ++i) {
    const double original = (w.*tensor)[i];
    double sides[2];
    for (int side = 0; side < 2; ++side) {
      (w.*tensor)[i] = original + (side == 0 ? kStep : -kStep);
      const std::vector<double> y = reference_forward(s, w, chosen);
      sides[side] = 0.0;
      for (size_t k = 0; k < y.size(); ++k) sides[side] += y[k] * dy[k];
    }
    (w.*tensor)[i] = original;
    gradient[i] = (sides[0] - sides[1]) / (2 * kStep);
  }
  return gradient;
}

TEST(Moe, MatchesFloat64ReferenceAndFiniteDifferences) {
  const kernels::MoeShape& s = kShape;
  const size_t d = static_cast<size_t>(s.features), e = static_cast<size_t>(s.experts),
               ffn = static_cast<size_t>(s.ffn), t = static_cast<size_t>(s.tokens);
  const auto x = random_floats(t * d, 91), router = random_floats(e * d, 92, -2.0f, 2.0f);
  const auto w1 = random_floats(e * ffn * d, 93), w3 = random_floats(e * ffn * d, 94);
  const auto w2 = random_floats(e * d * ffn, 95), dy = random_floats(t * d, 96);
  const Weights weights{to_double(x), to_double(router), to_double(w1), to_double(w3), to_double(w2)};

  CpuKernelFactory factory;
  const auto kernel = factory.make_moe(s);
  std::vector<float> y(t * d), kept(static_cast<size_t>(kernels::moe_kept_elements(s)));
  kernel->forward(x.data(), router.data(), w1.data(), w3.data(), w2.data(), y.data(), kept.data());
  std::vector<int64_t> chosen;
  expect_close(y, reference_forward(s, weights, chosen), 1e-5, "y");

  // Gradients are added into: start them at 1 to see that they are not overwritten.
  std::vector<float> dx(t * d), d_router(e * d, 1.0f), d_w1(e * ffn * d, 1.0f), d_w3(e * ffn * d, 1.0f),
      d_w2(e * d * ffn, 1.0f);
  kernel->backward(x.data(), dy.data(), router.data(), w1.data(), w3.data(), w2.data(), kept.data(), dx.data(),
                   d_router.data(), d_w1.data(), d_w3.data(), d_w2.data());
  const std::vector<double> dy_double = to_double(dy);
  auto plus_one = [](std::vector<double> v) {
    for (double& value : v) value += 1.0;
    return v;
  };
  expect_close(dx, finite_difference(s, weights, &Weights::x, dy_double, chosen), 1e-4, "dx");
  expect_close(d_router, plus_one(finite_difference(s, weights, &Weights::router, dy_double, chosen)), 1e-4,
               "d_router");
  expect_close(d_w1, plus_one(finite_difference(s, weights, &Weights::w1, dy_double, chosen)), 1e-4, "d_w1");
  expect_close(d_w3, plus_one(finite_difference(s, weights, &Weights::w3, dy_double, chosen)), 1e-4, "d_w3");
  expect_close(d_w2, plus_one(finite_difference(s, weights, &Weights::w2, dy_double, chosen)), 1e-4, "d_w2");

  // Without an input gradient the weights' gradients are the same.
  std::vector<float> d_router_alone(e * d, 1.0f), d_w1_alone(e * ffn * d, 1.0f), d_w3_alone(e * ffn * d, 1.0f),
      d_w2_alone(e * d * ffn, 1.0f);
  kernel->backward(x.data(), dy.data(), router.data(), w1.data(), w3.data(), w2.data(), kept.data(), nullptr,
                   d_router_alone.data(), d_w1_alone.data(), d_w3_alone.data(), d_w2_alone.data());
  EXPECT_EQ(d_router_alone, d_router);
  EXPECT_EQ(d_w2_alone, d_w2);
}

TEST(Moe, KeepsProbabilitiesAndTheRoutedGateAndUp) {
  EXPECT_EQ(kernels::moe_kept_elements(kShape), 7 * 4 + 2 * (7 * 2) * 5);
}

TEST(Moe, ChoosesTheLargestAndTheLowerExpertOnATie) {
  const float p[] = {0.1f, 0.3f, 0.3f, 0.3f};
  int64_t chosen[2];
  kernels::choose_top_experts(p, 4, 2, chosen);
  EXPECT_EQ(chosen[0], 1);
  EXPECT_EQ(chosen[1], 2);
}

TEST(Moe, RefusesTopKBeyondTheExperts) {
  CpuKernelFactory factory;
  kernels::MoeShape s = kShape;
  s.top_k = 5;
  EXPECT_THROW(factory.make_moe(s), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
