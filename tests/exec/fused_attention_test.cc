// The CPU SelfAttentionKernel with fused (flash-style memory): it keeps only the log-sum-exp of
// every score row and makes the probabilities again in backward. Against the unfused kernel and
// the float64 reference (tests/exec/attention_reference.h) over multi-head, grouped-query,
// multi-query and rotary shapes: y, the kept statistics and the fused input gradient agree within
// float rounding, and forward's y is the unfused kernel's bit for bit (the same products and the
// same softmax).

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "tests/exec/attention_reference.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AttentionShape;
using testing::expect_close;
using testing::fused_elements;
using testing::name_of;
using testing::random_floats;
using testing::reference_attention;
using testing::widened;

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

struct KernelRun {
  std::vector<float> y, kept, dx;
};

KernelRun run(const AttentionShape& s, const std::vector<float>& x, const std::vector<float>& dy) {
  CpuKernelFactory factory;
  const auto kernel = factory.make_self_attention(s);
  KernelRun r{std::vector<float>(dy.size()), std::vector<float>(at(kernel->kept_elements())),
              std::vector<float>(x.size(), 7.0f)};
  kernel->forward(x.data(), r.y.data(), r.kept.data());
  kernel->backward(x.data(), r.kept.data(), dy.data(), r.dx.data());
  return r;
}

class FusedAttentionCase : public ::testing::TestWithParam<AttentionShape> {};

TEST_P(FusedAttentionCase, KeepsRowStatisticsAndMatchesUnfusedAndFloat64) {
  AttentionShape s = GetParam();
  SCOPED_TRACE(name_of(s));
  const auto x = random_floats(at(fused_elements(s)), 211, -2.0f, 2.0f);
  const auto dy = random_floats(at(s.batch * s.seq * s.heads * s.head_dim), 212);
  const testing::Reference ref = reference_attention(s, widened(x), widened(dy));

  s.fused = false;
  const KernelRun unfused = run(s, x, dy);
  s.fused = true;
  const KernelRun fused = run(s, x, dy);
  ASSERT_EQ(static_cast<int64_t>(fused.kept.size()), s.batch * s.heads * s.seq);  // a statistic per score row
  EXPECT_EQ(kernels::attention_kept_elements(s), s.batch * s.heads * s.seq);

  EXPECT_EQ(fused.y, unfused.y);  // forward computes the same probabilities either way
  expect_close(fused.y, ref.y, 1e-5, "y");
  expect_close(fused.kept, ref.log_sum_exp, 1e-5, "log-sum-exp");
  expect_close(unfused.kept, ref.probs, 1e-5, "unfused probabilities");
  // Every element overwritten; the recomputed probabilities differ from forward's by rounding.
  expect_close(fused.dx, ref.dx, 1e-4, "fused dx");
  expect_close(unfused.dx, ref.dx, 1e-4, "unfused dx");
  expect_close(fused.dx, widened(unfused.dx), 1e-5, "fused against unfused dx");
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedAttentionCase,
                         ::testing::Values(AttentionShape{2, 5, 4, 6, true, 2, 10000.0},    // GQA and rotary, as Llama
                                           AttentionShape{1, 7, 4, 4, false, 1, 0.0},       // multi-query, not causal
                                           AttentionShape{2, 6, 3, 8, true, 0, 500000.0},   // multi-head with rotation
                                           AttentionShape{1, 16, 2, 4, true, 0, 0.0},       // multi-head, longer rows
                                           AttentionShape{3, 1, 2, 4, true, 1, 10000.0}));  // one position

TEST(FusedAttention, RowsOfLargeScoresStayFinite) {
  // Scores up to 200, far past exp's float range (88): the statistic is max + log(sum of
  // exp(s - max)), never the log of an overflowed sum.
  AttentionShape s{1, 6, 2, 4, true, 0, 0.0};
  s.fused = true;
  const auto x = random_floats(at(fused_elements(s)), 213, -10.0f, 10.0f);
  const auto dy = random_floats(at(s.batch * s.seq * s.heads * s.head_dim), 214);
  const testing::Reference ref = reference_attention(s, widened(x), widened(dy));
  const KernelRun fused = run(s, x, dy);
  expect_close(fused.kept, ref.log_sum_exp, 1e-5, "log-sum-exp");
  expect_close(fused.y, ref.y, 1e-4, "y");
  for (float v : fused.dx) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace splitbrain::exec::cpu
