// The CPU SelfAttentionKernel with grouped-query attention and rotary positions against a
// float64 reference written here in loops (a group's k and v shared by its query heads, q and k
// rotated by Hugging Face Llama's rotate-half): y, the kept probabilities and the fused input
// gradient. The reference's gradient is checked by central differences of sum(y * dy), and the
// reference itself against PyTorch (tests/exec/golden/gqa_rope_attention_pytorch.json, from
// tools/pytorch_attention_reference.py: matmul, softmax, repeat_interleave, rotate_half).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/cpu/attention.h"
#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AttentionShape;
using testing::expect_close;
using testing::random_floats;

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

// Where the parts of the fused input sit, written out from the layout's definition (per
// position, per group: its query heads, its k, its v) rather than from kernels::GroupedHeads.
struct FusedIndex {
  int64_t seq, heads, kv_heads, head_dim;
  int64_t group() const { return heads / kv_heads; }
  int64_t width() const { return (heads + 2 * kv_heads) * head_dim; }
  int64_t q(int64_t n, int64_t t, int64_t h, int64_t d) const {
    return (n * seq + t) * width() + (h / group() * (group() + 2) + h % group()) * head_dim + d;
  }
  int64_t k(int64_t n, int64_t t, int64_t g, int64_t d) const {
    return (n * seq + t) * width() + (g * (group() + 2) + group()) * head_dim + d;
  }
  int64_t v(int64_t n, int64_t t, int64_t g, int64_t d) const { return k(n, t, g, d) + head_dim; }
};

// Rotates one head's row in place by position t (direction -1: the transpose).
void rotate(std::vector<double>& row, int64_t t, double theta, int direction) {
  const auto half = row.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    const double angle =
        static_cast<double>(t) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(row.size()));
    const double c = std::cos(angle), s = direction * std::sin(angle);
    const double first = row[i], second = row[i + half];
    row[i] = first * c - second * s;
    row[i + half] = second * c + first * s;
  }
}

struct Reference {
  std::vector<double> y, probs, dx;
};

// Attention in float64: forward, and backward by the chain rule through the softmax, the
// sharing of k and v and the rotation.
Reference reference_attention(const AttentionShape& s, const std::vector<double>& x, const std::vector<double>& dy) {
  const int64_t T = s.seq, H = s.heads, K = s.kv_heads > 0 ? s.kv_heads : s.heads, E = s.head_dim;
  const FusedIndex fi{T, H, K, E};
  const double scale = 1 / std::sqrt(static_cast<double>(E));
  const bool rope = s.rope_theta > 0;
  Reference r;
  r.y.assign(at(s.batch * T * H * E), 0.0);
  r.probs.assign(at(s.batch * H * T * T), 0.0);
  r.dx.assign(x.size(), 0.0);
  auto yi = [&](int64_t n, int64_t t, int64_t h, int64_t d) { return at(((n * T + t) * H + h) * E + d); };
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / fi.group();
      // The rotated q of this head and k of its group, [T][E].
      std::vector<std::vector<double>> q(at(T), std::vector<double>(at(E))), k = q, v = q;
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t d = 0; d < E; ++d) {
          q[at(t)][at(d)] = x[at(fi.q(n, t, h, d))];
          k[at(t)][at(d)] = x[at(fi.k(n, t, g, d))];
          v[at(t)][at(d)] = x[at(fi.v(n, t, g, d))];
        }
        if (rope) rotate(q[at(t)], t, s.rope_theta, +1), rotate(k[at(t)], t, s.rope_theta, +1);
      }
      std::vector<double> P(at(T * T), 0.0);
      auto p = [&](int64_t i, int64_t j) -> double& { return P[at(i * T + j)]; };
      for (int64_t i = 0; i < T; ++i) {
        const int64_t visible = s.causal ? i + 1 : T;
        double max = -1e300, sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < E; ++d) dot += q[at(i)][at(d)] * k[at(j)][at(d)];
          max = std::max(max, p(i, j) = dot * scale);
        }
        for (int64_t j = 0; j < visible; ++j) sum += (p(i, j) = std::exp(p(i, j) - max));
        for (int64_t j = 0; j < visible; ++j) p(i, j) /= sum;
        for (int64_t j = 0; j < T; ++j) {
          r.probs[at(((n * H + h) * T + i) * T + j)] = p(i, j);
          for (int64_t d = 0; d < E; ++d) r.y[yi(n, i, h, d)] += p(i, j) * v[at(j)][at(d)];
        }
      }
      // dq, dk of the rotated vectors; turned back below. dv adds into the group's v.
      std::vector<std::vector<double>> dq(at(T), std::vector<double>(at(E), 0.0)), dk = dq;
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> dp(at(T), 0.0);
        double row = 0;
        for (int64_t j = 0; j < T; ++j) {
          for (int64_t d = 0; d < E; ++d) {
            dp[at(j)] += dy[yi(n, i, h, d)] * v[at(j)][at(d)];
            r.dx[at(fi.v(n, j, g, d))] += p(i, j) * dy[yi(n, i, h, d)];
          }
          row += dp[at(j)] * p(i, j);
        }
        for (int64_t j = 0; j < T; ++j) {
          const double ds = p(i, j) * (dp[at(j)] - row) * scale;
          for (int64_t d = 0; d < E; ++d) {
            dq[at(i)][at(d)] += ds * k[at(j)][at(d)];
            dk[at(j)][at(d)] += ds * q[at(i)][at(d)];
          }
        }
      }
      for (int64_t t = 0; t < T; ++t) {
        if (rope) rotate(dq[at(t)], t, s.rope_theta, -1), rotate(dk[at(t)], t, s.rope_theta, -1);
        for (int64_t d = 0; d < E; ++d) {
          r.dx[at(fi.q(n, t, h, d))] += dq[at(t)][at(d)];
          r.dx[at(fi.k(n, t, g, d))] += dk[at(t)][at(d)];
        }
      }
    }
  return r;
}

std::vector<double> widened(const std::vector<float>& v) { return {v.begin(), v.end()}; }

int64_t fused_elements(const AttentionShape& s) {
  const int64_t kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  return s.batch * s.seq * (s.heads + 2 * kv) * s.head_dim;
}

std::string name_of(const AttentionShape& s) {
  return "batch " + std::to_string(s.batch) + " seq " + std::to_string(s.seq) + " heads " + std::to_string(s.heads) +
         " kv_heads " + std::to_string(s.kv_heads) + " head_dim " + std::to_string(s.head_dim) +
         (s.causal ? " causal" : "") + " rope_theta " + std::to_string(s.rope_theta);
}

class GroupedAttentionCase : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(GroupedAttentionCase, MatchesFloat64ReferenceAndFiniteDifferences) {
  const AttentionShape s = GetParam();
  SCOPED_TRACE(name_of(s));
  const auto x = random_floats(at(fused_elements(s)), 111, -2.0f, 2.0f);
  const auto dy = random_floats(at(s.batch * s.seq * s.heads * s.head_dim), 112);
  const Reference ref = reference_attention(s, widened(x), widened(dy));

  // The reference's gradient against central differences of sum(y * dy), every input element.
  const double h = 1e-6;
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = widened(x), down = up;
    up[i] += h, down[i] -= h;
    const std::vector<double> y_up = reference_attention(s, up, widened(dy)).y;
    const std::vector<double> y_down = reference_attention(s, down, widened(dy)).y;
    double loss_up = 0, loss_down = 0;
    for (std::size_t j = 0; j < dy.size(); ++j) loss_up += y_up[j] * dy[j], loss_down += y_down[j] * dy[j];
    EXPECT_NEAR((loss_up - loss_down) / (2 * h), ref.dx[i], 1e-6) << "dx[" << i << "]";
  }

  CpuKernelFactory factory;
  const auto kernel = factory.make_self_attention(s);
  std::vector<float> y(dy.size()), probs(at(kernel->probs_elements())), dx(x.size(), 7.0f);
  kernel->forward(x.data(), y.data(), probs.data());
  kernel->backward(x.data(), probs.data(), dy.data(), dx.data());
  expect_close(y, ref.y, 1e-5, "y");
  expect_close(probs, ref.probs, 1e-5, "probs");
  expect_close(dx, ref.dx, 1e-4, "dx");  // every element overwritten, through the softmax's difference of terms
}

INSTANTIATE_TEST_SUITE_P(Shapes, GroupedAttentionCase,
                         ::testing::Values(AttentionShape{2, 5, 4, 6, true, 2, 10000.0},   // GQA and rotary, as Llama
                                           AttentionShape{1, 7, 4, 4, false, 1, 0.0},      // multi-query, no rotation
                                           AttentionShape{2, 6, 3, 8, true, 0, 500000.0},  // multi-head with rotation
                                           AttentionShape{1, 9, 6, 2, true, 3, 10.0},  // two-wide heads, fast angles
                                           AttentionShape{3, 1, 2, 4, true, 1,
                                                          10000.0}));  // one position: no turn at all

TEST(GroupedAttention, KvHeadsEqualToHeadsIsMultiHeadAttention) {
  // Both spellings of multi-head attention give bit-identical results on the same input.
  const AttentionShape unset{2, 5, 3, 4, true, 0, 0.0}, equal{2, 5, 3, 4, true, 3, 0.0};
  const auto x = random_floats(at(fused_elements(unset)), 113), dy = random_floats(at(2 * 5 * 3 * 4), 114);
  CpuKernelFactory factory;
  std::vector<std::vector<float>> results;  // y then dx, per spelling
  for (const AttentionShape& s : {unset, equal}) {
    const auto kernel = factory.make_self_attention(s);
    std::vector<float> y(dy.size()), probs(at(kernel->probs_elements())), dx(x.size());
    kernel->forward(x.data(), y.data(), probs.data());
    kernel->backward(x.data(), probs.data(), dy.data(), dx.data());
    y.insert(y.end(), dx.begin(), dx.end());
    results.push_back(y);
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(GroupedAttention, ReferenceAndKernelMatchPyTorch) {
  std::ifstream file(SPLITBRAIN_ATTENTION_GOLDEN_FILE);
  ASSERT_TRUE(file) << SPLITBRAIN_ATTENTION_GOLDEN_FILE;
  const nlohmann::json golden = nlohmann::json::parse(file);
  const nlohmann::json& g = golden.at("shape");
  const AttentionShape s{g.at("batch"),  g.at("seq"),      g.at("heads"),     g.at("head_dim"),
                         g.at("causal"), g.at("kv_heads"), g.at("rope_theta")};
  const auto x = golden.at("x").get<std::vector<double>>(), dy = golden.at("dy").get<std::vector<double>>();
  const auto y_torch = golden.at("y").get<std::vector<double>>(), dx_torch = golden.at("dx").get<std::vector<double>>();
  ASSERT_EQ(static_cast<int64_t>(x.size()), fused_elements(s));

  const Reference ref = reference_attention(s, x, dy);
  ASSERT_EQ(ref.y.size(), y_torch.size());
  for (std::size_t i = 0; i < y_torch.size(); ++i) EXPECT_NEAR(ref.y[i], y_torch[i], 1e-12) << "y[" << i << "]";
  for (std::size_t i = 0; i < dx_torch.size(); ++i) EXPECT_NEAR(ref.dx[i], dx_torch[i], 1e-12) << "dx[" << i << "]";

  CpuKernelFactory factory;
  const auto kernel = factory.make_self_attention(s);
  const std::vector<float> xf(x.begin(), x.end()), dyf(dy.begin(), dy.end());  // fp32 values, exactly
  std::vector<float> y(dyf.size()), probs(at(kernel->probs_elements())), dx(xf.size());
  kernel->forward(xf.data(), y.data(), probs.data());
  kernel->backward(xf.data(), probs.data(), dyf.data(), dx.data());
  expect_close(y, y_torch, 1e-5, "y against PyTorch");
  expect_close(dx, dx_torch, 1e-4, "dx against PyTorch");
}

TEST(GroupedAttention, RefusesKvHeadsThatDoNotDivideAndOddRotatedHeads) {
  CpuKernelFactory factory;
  EXPECT_THROW(factory.make_self_attention(AttentionShape{1, 4, 4, 4, true, 3, 0.0}), kernels::KernelArgumentError);
  EXPECT_THROW(factory.make_self_attention(AttentionShape{1, 4, 4, 4, true, -1, 0.0}), kernels::KernelArgumentError);
  EXPECT_THROW(factory.make_self_attention(AttentionShape{1, 4, 4, 3, true, 2, 10000.0}), kernels::KernelArgumentError);
  EXPECT_NO_THROW(factory.make_self_attention(AttentionShape{1, 4, 4, 3, true, 2, 0.0}));
}

}  // namespace
}  // namespace splitbrain::exec::cpu
