#include "tests/exec/attention_reference.h"

#include <algorithm>
#include <cmath>

namespace splitbrain::exec::cpu::testing {
namespace {

using kernels::AttentionShape;

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

}  // namespace

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
  r.log_sum_exp.assign(at(s.batch * H * T), 0.0);
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
        r.log_sum_exp[at((n * H + h) * T + i)] = max + std::log(sum);
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

}  // namespace splitbrain::exec::cpu::testing
