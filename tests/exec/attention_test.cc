// Self-attention on the fused head-major input against float64 loops: output, kept
// probabilities and the fused input gradient, causal and not, odd sizes.

#include "exec/cpu/attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AttentionShape;
using testing::expect_close;
using testing::random_floats;

struct AttentionReference {
  std::vector<double> y, probs, dx;
};

AttentionReference reference_attention(const AttentionShape& s, const std::vector<float>& x,
                                       const std::vector<float>& dy) {
  const int64_t T = s.seq, H = s.heads, E = s.head_dim;
  const double scale = 1 / std::sqrt(static_cast<double>(E));
  AttentionReference r;
  r.y.assign(static_cast<std::size_t>(s.batch * T * H * E), 0.0);
  r.probs.assign(static_cast<std::size_t>(s.batch * H * T * T), 0.0);
  r.dx.assign(x.size(), 0.0);
  // Index of q (part 0), k (1), v (2) element d of position t, head h, sample n in the fused input.
  auto xi = [&](int64_t n, int64_t t, int64_t h, int64_t part, int64_t d) {
    return static_cast<std::size_t>(((n * T + t) * H + h) * 3 * E + part * E + d);
  };
  auto yi = [&](int64_t n, int64_t t, int64_t h, int64_t d) {
    return static_cast<std::size_t>(((n * T + t) * H + h) * E + d);
  };
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t h = 0; h < H; ++h) {
      std::vector<double> P(static_cast<std::size_t>(T * T), 0.0), dS(P.size(), 0.0);
      auto p = [&](int64_t i, int64_t j) -> double& { return P[static_cast<std::size_t>(i * T + j)]; };
      for (int64_t i = 0; i < T; ++i) {
        const int64_t visible = s.causal ? i + 1 : T;
        double max = -1e300, sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < E; ++d) dot += static_cast<double>(x[xi(n, i, h, 0, d)]) * x[xi(n, j, h, 1, d)];
          p(i, j) = dot * scale;
          max = std::max(max, p(i, j));
        }
        for (int64_t j = 0; j < visible; ++j) sum += (p(i, j) = std::exp(p(i, j) - max));
        for (int64_t j = 0; j < visible; ++j) p(i, j) /= sum;
        for (int64_t j = 0; j < T; ++j) r.probs[static_cast<std::size_t>(((n * H + h) * T + i) * T + j)] = p(i, j);
        for (int64_t j = 0; j < T; ++j)
          for (int64_t d = 0; d < E; ++d) r.y[yi(n, i, h, d)] += p(i, j) * x[xi(n, j, h, 2, d)];
      }
      for (int64_t i = 0; i < T; ++i) {
        double row = 0;
        for (int64_t j = 0; j < T; ++j) {
          double dp = 0;
          for (int64_t d = 0; d < E; ++d) {
            dp += static_cast<double>(dy[yi(n, i, h, d)]) * x[xi(n, j, h, 2, d)];
            r.dx[xi(n, j, h, 2, d)] += p(i, j) * dy[yi(n, i, h, d)];  // dV
          }
          dS[static_cast<std::size_t>(i * T + j)] = dp;
          row += dp * p(i, j);
        }
        for (int64_t j = 0; j < T; ++j) {
          const double ds = p(i, j) * (dS[static_cast<std::size_t>(i * T + j)] - row) * scale;
          for (int64_t d = 0; d < E; ++d) {
            r.dx[xi(n, i, h, 0, d)] += ds * x[xi(n, j, h, 1, d)];  // dQ
            r.dx[xi(n, j, h, 1, d)] += ds * x[xi(n, i, h, 0, d)];  // dK
          }
        }
      }
    }
  return r;
}

class AttentionCase : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(AttentionCase, MatchesFloat64Reference) {
  const AttentionShape s = GetParam();
  const auto x = random_floats(static_cast<std::size_t>(s.batch * s.seq * s.heads * 3 * s.head_dim), 101, -2.0f, 2.0f);
  const auto dy = random_floats(static_cast<std::size_t>(s.batch * s.seq * s.heads * s.head_dim), 102);
  const AttentionReference ref = reference_attention(s, x, dy);
  CpuContext context;
  SelfAttentionKernel kernel(context, s);
  std::vector<float> y(dy.size()), probs(static_cast<std::size_t>(kernel.kept_elements())), dx(x.size());
  kernel.forward(x.data(), y.data(), probs.data());
  kernel.backward(x.data(), probs.data(), dy.data(), dx.data());
  expect_close(y, ref.y, 1e-5, "y");
  expect_close(probs, ref.probs, 1e-5, "probs");
  expect_close(dx, ref.dx, 1e-4, "dx");  // through the softmax backward's difference of terms
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionCase,
                         ::testing::Values(AttentionShape{2, 5, 3, 4, true}, AttentionShape{1, 7, 2, 8, false},
                                           AttentionShape{3, 1, 1, 3, true}, AttentionShape{2, 16, 4, 16, true}));

}  // namespace
}  // namespace splitbrain::exec::cpu
