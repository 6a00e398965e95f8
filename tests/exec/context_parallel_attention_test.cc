// The CPU SelfAttentionKernel under context parallelism (AttentionShape::queries, query_start):
// calls that each take a contiguous share of the queries against every key give, together, what
// one call over the whole sequence gives: their outputs are its rows, and their input gradients
// (whole sequences, q zero outside each call's queries) sum to its gradient. Causal and not, with
// grouped-query attention, rotary positions and fused statistics.

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/attention_reference.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AttentionShape;
using testing::fused_elements;
using testing::name_of;
using testing::random_floats;

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

struct SplitCase {
  AttentionShape shape;
  int calls = 2;  // shares of the queries
};

class ContextParallelAttention : public ::testing::TestWithParam<SplitCase> {};

TEST_P(ContextParallelAttention, SharesOfTheQueriesMakeTheWholeCall) {
  const AttentionShape whole = GetParam().shape;
  const int calls = GetParam().calls;
  SCOPED_TRACE(name_of(whole) + " over " + std::to_string(calls) + " calls");
  const int64_t width = whole.heads * whole.head_dim;
  const auto x = random_floats(at(fused_elements(whole)), 211, -2.0f, 2.0f);
  const auto dy = random_floats(at(whole.batch * whole.seq * width), 212);

  CpuKernelFactory factory;
  const auto reference = factory.make_self_attention(whole);
  std::vector<float> y(dy.size()), kept(at(reference->kept_elements())), dx(x.size());
  reference->forward(x.data(), y.data(), kept.data());
  reference->backward(x.data(), kept.data(), dy.data(), dx.data());

  const int64_t rows = whole.seq / calls;
  std::vector<double> dx_sum(x.size(), 0.0);
  for (int c = 0; c < calls; ++c) {
    AttentionShape share = whole;
    share.queries = rows;
    share.query_start = c * rows;
    const auto kernel = factory.make_self_attention(share);
    ASSERT_EQ(kernel->kept_elements() * calls, reference->kept_elements());
    // The share's rows of dy, sample by sample.
    std::vector<float> dy_share(at(whole.batch * rows * width)), y_share(dy_share.size());
    for (int64_t n = 0; n < whole.batch; ++n)
      for (int64_t e = 0; e < rows * width; ++e)
        dy_share[at(n * rows * width + e)] = dy[at((n * whole.seq + share.query_start) * width + e)];
    std::vector<float> kept_share(at(kernel->kept_elements())), dx_share(x.size(), 7.0f);
    kernel->forward(x.data(), y_share.data(), kept_share.data());
    kernel->backward(x.data(), kept_share.data(), dy_share.data(), dx_share.data());
    for (int64_t n = 0; n < whole.batch; ++n)
      for (int64_t e = 0; e < rows * width; ++e) {
        EXPECT_NEAR(y_share[at(n * rows * width + e)], y[at((n * whole.seq + share.query_start) * width + e)], 1e-5)
            << "call " << c << " sample " << n << " element " << e;
      }
    for (std::size_t i = 0; i < x.size(); ++i) dx_sum[i] += dx_share[i];
  }
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(dx_sum[i], dx[i], 1e-5) << "dx[" << i << "]";
}

AttentionShape shape(int64_t heads, int64_t kv_heads, bool causal, double rope_theta, bool fused) {
  AttentionShape s;
  s.batch = 2;
  s.seq = 8;
  s.heads = heads;
  s.head_dim = 4;
  s.causal = causal;
  s.kv_heads = kv_heads;
  s.rope_theta = rope_theta;
  s.fused = fused;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shares, ContextParallelAttention,
    ::testing::Values(SplitCase{shape(2, 0, true, 0.0, false), 2}, SplitCase{shape(2, 0, false, 0.0, false), 2},
                      SplitCase{shape(4, 2, true, 10000.0, false), 2}, SplitCase{shape(4, 2, true, 10000.0, false), 4},
                      SplitCase{shape(4, 2, true, 10000.0, true), 2}, SplitCase{shape(4, 1, false, 500.0, true), 4}));

TEST(ContextParallelAttention, QueriesOutsideTheSequenceAreRefused) {
  AttentionShape s = shape(2, 0, true, 0.0, false);
  s.queries = 4;
  s.query_start = 6;
  CpuKernelFactory factory;
  EXPECT_THROW(factory.make_self_attention(s), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
