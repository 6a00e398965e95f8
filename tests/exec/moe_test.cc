// The CPU MoeKernel (through CpuKernelFactory, as the ops get it) against float64 loops written
// from the definition (exec/kernels/moe.h): the output, and every gradient by central differences
// of sum(y * dy) in float64, the routing held as forward chose it (the choice has no gradient).

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <memory>
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
const kernels::MoeShape kShape{
    .tokens = 7, .features = 6, .experts = 4, .top_k = 2, .ffn = 5, .first_expert = 0, .held_experts = 4};

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
  std::vector<float> d_routing_weights(t * e);
  kernel->backward_experts(x.data(), dy.data(), w1.data(), w3.data(), w2.data(), kept.data(), dx.data(), d_w1.data(),
                           d_w3.data(), d_w2.data(), d_routing_weights.data());
  kernel->backward_router(x.data(), router.data(), kept.data(), d_routing_weights.data(), dx.data(), d_router.data());
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
  kernel->backward_experts(x.data(), dy.data(), w1.data(), w3.data(), w2.data(), kept.data(), nullptr,
                           d_w1_alone.data(), d_w3_alone.data(), d_w2_alone.data(), d_routing_weights.data());
  kernel->backward_router(x.data(), router.data(), kept.data(), d_routing_weights.data(), nullptr,
                          d_router_alone.data());
  EXPECT_EQ(d_router_alone, d_router);
  EXPECT_EQ(d_w2_alone, d_w2);
}

// Expert parallelism: two ranks holding experts [0, 2) and [2, 4) of the same tokens. Their outputs
// and input gradients (the router's share added by the first only) sum to the whole layer's, their
// routing weights' gradients too (the sum the plan's all-reduce takes), each then computes the
// whole router gradient, and each expert's gradients are the whole layer's for that expert.
TEST(Moe, HeldExpertsGiveTheirShareOfTheWholeLayer) {
  const kernels::MoeShape& s = kShape;
  const size_t d = static_cast<size_t>(s.features), e = static_cast<size_t>(s.experts),
               ffn = static_cast<size_t>(s.ffn), t = static_cast<size_t>(s.tokens);
  const auto x = random_floats(t * d, 91), router = random_floats(e * d, 92, -2.0f, 2.0f);
  const auto w1 = random_floats(e * ffn * d, 93), w3 = random_floats(e * ffn * d, 94);
  const auto w2 = random_floats(e * d * ffn, 95), dy = random_floats(t * d, 96);
  CpuKernelFactory factory;
  std::vector<float> kept(static_cast<size_t>(kernels::moe_kept_elements(s)));

  // The whole layer.
  const auto whole = factory.make_moe(s);
  std::vector<float> y(t * d), dx(t * d), d_routing(t * e), d_router(e * d), d_w1(e * ffn * d), d_w3(e * ffn * d),
      d_w2(e * d * ffn);
  whole->forward(x.data(), router.data(), w1.data(), w3.data(), w2.data(), y.data(), kept.data());
  whole->backward_experts(x.data(), dy.data(), w1.data(), w3.data(), w2.data(), kept.data(), dx.data(), d_w1.data(),
                          d_w3.data(), d_w2.data(), d_routing.data());
  whole->backward_router(x.data(), router.data(), kept.data(), d_routing.data(), dx.data(), d_router.data());

  // Two halves: their forwards and expert passes, the routing gradients summed, their router passes.
  constexpr size_t kHalves = 2;
  const size_t held = e / kHalves;
  std::vector<double> y_sum(t * d, 0.0), dx_sum(t * d, 0.0);
  std::vector<float> d_routing_sum(t * e, 0.0f);
  std::vector<std::vector<float>> half_kept(kHalves), half_dx(kHalves);
  std::vector<std::unique_ptr<kernels::MoeKernel>> halves;
  for (size_t h = 0; h < kHalves; ++h) {
    kernels::MoeShape shape = s;
    shape.first_expert = static_cast<int64_t>(h * held);
    shape.held_experts = static_cast<int64_t>(held);
    halves.push_back(factory.make_moe(shape));
    const size_t gate_block = held * ffn * d, down_block = held * d * ffn;
    half_kept[h].resize(kept.size());
    half_dx[h].resize(t * d);
    std::vector<float> half_y(t * d), half_routing(t * e), half_w1(gate_block), half_w3(gate_block),
        half_w2(down_block);
    halves[h]->forward(x.data(), router.data(), w1.data() + h * gate_block, w3.data() + h * gate_block,
                       w2.data() + h * down_block, half_y.data(), half_kept[h].data());
    halves[h]->backward_experts(x.data(), dy.data(), w1.data() + h * gate_block, w3.data() + h * gate_block,
                                w2.data() + h * down_block, half_kept[h].data(), half_dx[h].data(), half_w1.data(),
                                half_w3.data(), half_w2.data(), half_routing.data());
    for (size_t i = 0; i < y_sum.size(); ++i) y_sum[i] += half_y[i];
    for (size_t i = 0; i < d_routing_sum.size(); ++i) d_routing_sum[i] += half_routing[i];
    const std::vector<float> whole_w1(d_w1.begin() + static_cast<std::ptrdiff_t>(h * gate_block),
                                      d_w1.begin() + static_cast<std::ptrdiff_t>((h + 1) * gate_block));
    const std::vector<float> whole_w2(d_w2.begin() + static_cast<std::ptrdiff_t>(h * down_block),
                                      d_w2.begin() + static_cast<std::ptrdiff_t>((h + 1) * down_block));
    expect_close(half_w1, to_double(whole_w1), 1e-5, "d_w1 of a half");
    expect_close(half_w2, to_double(whole_w2), 1e-5, "d_w2 of a half");
  }
  for (size_t h = 0; h < kHalves; ++h) {
    std::vector<float> half_router(e * d);
    halves[h]->backward_router(x.data(), router.data(), half_kept[h].data(), d_routing_sum.data(),
                               h == 0 ? half_dx[h].data() : nullptr, half_router.data());
    expect_close(half_router, to_double(d_router), 1e-5, "d_router of a half");
    for (size_t i = 0; i < dx_sum.size(); ++i) dx_sum[i] += half_dx[h][i];
  }
  const std::vector<float> y_total(y_sum.begin(), y_sum.end()), dx_total(dx_sum.begin(), dx_sum.end());
  expect_close(y_total, to_double(y), 1e-5, "y summed over the halves");
  expect_close(dx_total, to_double(dx), 1e-5, "dx summed over the halves");
  expect_close(d_routing_sum, to_double(d_routing), 1e-6, "routing weights' gradients summed over the halves");
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

TEST(Moe, RefusesTopKOrHeldExpertsBeyondTheExperts) {
  CpuKernelFactory factory;
  kernels::MoeShape s = kShape;
  s.top_k = 5;
  EXPECT_THROW(factory.make_moe(s), kernels::KernelArgumentError);
  s = kShape;
  s.first_expert = 2;
  s.held_experts = 3;
  EXPECT_THROW(factory.make_moe(s), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
