// The CPU SelfAttentionKernel with grouped-query attention and rotary positions against a
// float64 reference in loops (tests/exec/attention_reference.h: a group's k and v shared by its
// query heads, q and k rotated by Hugging Face Llama's rotate-half): y, the kept probabilities and the fused input
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
#include "tests/exec/attention_reference.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AttentionShape;
using testing::expect_close;
using testing::fused_elements;
using testing::name_of;
using testing::random_floats;
using testing::Reference;
using testing::reference_attention;
using testing::widened;

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

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
  std::vector<float> y(dy.size()), probs(at(kernel->kept_elements())), dx(x.size(), 7.0f);
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
    std::vector<float> y(dy.size()), probs(at(kernel->kept_elements())), dx(x.size());
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
  std::vector<float> y(dyf.size()), probs(at(kernel->kept_elements())), dx(xf.size());
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
