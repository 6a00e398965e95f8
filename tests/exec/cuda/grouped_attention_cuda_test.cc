// The CUDA self-attention with grouped-query attention and rotary positions against its CPU twin
// (itself checked against float64 loops and PyTorch by tests/exec/grouped_attention_test.cc):
// y, the probabilities (or with fused each score row's log-sum-exp) and the fused input gradient.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exec/cpu/attention.h"
#include "exec/cuda/attention.h"
#include "exec/cuda/cuda_device.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

TEST(CudaGroupedAttention, ForwardAndBackwardMatchTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // GQA with rotation as Llama; multi-query without; multi-head with rotation.
  for (const kernels::AttentionShape& s :
       {kernels::AttentionShape{2, 5, 4, 6, true, 2, 10000.0}, kernels::AttentionShape{1, 7, 4, 4, false, 1, 0.0},
        kernels::AttentionShape{2, 6, 3, 8, true, 0, 500000.0}}) {
    SCOPED_TRACE("heads " + std::to_string(s.heads) + " kv_heads " + std::to_string(s.kv_heads) + " rope_theta " +
                 std::to_string(s.rope_theta));
    cpu::CpuContext cpu_context;
    CudaContext gpu_context(0);
    cpu::SelfAttentionKernel cpu_kernel(cpu_context, s);
    SelfAttentionKernel gpu_kernel(gpu_context, s);
    const int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
    const auto qkv = random_floats(count(s.batch * s.seq * (s.heads + 2 * kv_heads) * s.head_dim), 161);
    const auto dy = random_floats(count(s.batch * s.seq * s.heads * s.head_dim), 162);
    const OnDevice<float> gpu_qkv(qkv), gpu_dy(dy);
    std::vector<float> cpu_y(dy.size()), cpu_probs(count(cpu_kernel.kept_elements()));
    const OnDevice<float> gpu_y(dy.size()), gpu_probs(cpu_probs.size());
    cpu_kernel.forward(qkv.data(), cpu_y.data(), cpu_probs.data());
    gpu_kernel.forward(gpu_qkv.get(), gpu_y.get(), gpu_probs.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");
    expect_matches_cpu(gpu_probs.host(), cpu_probs, "probs");
    // Backward starts from the CPU's probabilities, so it is compared alone; every element of
    // dqkv is written (the buffer starts as garbage).
    const OnDevice<float> cpu_probs_on_gpu(cpu_probs), gpu_dqkv(std::vector<float>(qkv.size(), 7.0f));
    std::vector<float> cpu_dqkv(qkv.size());
    cpu_kernel.backward(qkv.data(), cpu_probs.data(), dy.data(), cpu_dqkv.data());
    gpu_kernel.backward(gpu_qkv.get(), cpu_probs_on_gpu.get(), gpu_dy.get(), gpu_dqkv.get());
    expect_matches_cpu(gpu_dqkv.host(), cpu_dqkv, "dqkv");
  }
}

// Fused: forward keeps each score row's log-sum-exp (own kernel) and backward makes the
// probabilities again from the recomputed scores; both against the CPU's fused kernel.
TEST(CudaGroupedAttention, FusedKeepsRowStatisticsAndMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  for (kernels::AttentionShape s :
       {kernels::AttentionShape{2, 5, 4, 6, true, 2, 10000.0}, kernels::AttentionShape{1, 7, 4, 4, false, 1, 0.0},
        kernels::AttentionShape{2, 6, 3, 8, true, 0, 500000.0}}) {
    s.fused = true;
    SCOPED_TRACE("heads " + std::to_string(s.heads) + " kv_heads " + std::to_string(s.kv_heads) + " causal " +
                 std::to_string(s.causal));
    cpu::CpuContext cpu_context;
    CudaContext gpu_context(0);
    cpu::SelfAttentionKernel cpu_kernel(cpu_context, s);
    SelfAttentionKernel gpu_kernel(gpu_context, s);
    ASSERT_EQ(gpu_kernel.kept_elements(), s.batch * s.heads * s.seq);
    const int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
    const auto qkv = random_floats(count(s.batch * s.seq * (s.heads + 2 * kv_heads) * s.head_dim), 163);
    const auto dy = random_floats(count(s.batch * s.seq * s.heads * s.head_dim), 164);
    const OnDevice<float> gpu_qkv(qkv), gpu_dy(dy);
    std::vector<float> cpu_y(dy.size()), cpu_statistics(count(cpu_kernel.kept_elements()));
    const OnDevice<float> gpu_y(dy.size()), gpu_statistics(cpu_statistics.size());
    cpu_kernel.forward(qkv.data(), cpu_y.data(), cpu_statistics.data());
    gpu_kernel.forward(gpu_qkv.get(), gpu_y.get(), gpu_statistics.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");
    expect_matches_cpu(gpu_statistics.host(), cpu_statistics, "log-sum-exp");
    const OnDevice<float> cpu_statistics_on_gpu(cpu_statistics), gpu_dqkv(std::vector<float>(qkv.size(), 7.0f));
    std::vector<float> cpu_dqkv(qkv.size());
    cpu_kernel.backward(qkv.data(), cpu_statistics.data(), dy.data(), cpu_dqkv.data());
    gpu_kernel.backward(gpu_qkv.get(), cpu_statistics_on_gpu.get(), gpu_dy.get(), gpu_dqkv.get());
    expect_matches_cpu(gpu_dqkv.host(), cpu_dqkv, "dqkv");
  }
}

// Context parallelism: a call for a block of the queries (the middle one of 3, so both a leading
// and a trailing block of positions are another call's) against every key, unfused and fused.
TEST(CudaGroupedAttention, ShareOfTheQueriesMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  for (const bool fused : {false, true}) {
    kernels::AttentionShape s{2, 6, 4, 6, true, 2, 10000.0, fused, 2, 2};
    SCOPED_TRACE(std::string("fused ") + (fused ? "yes" : "no"));
    cpu::CpuContext cpu_context;
    CudaContext gpu_context(0);
    cpu::SelfAttentionKernel cpu_kernel(cpu_context, s);
    SelfAttentionKernel gpu_kernel(gpu_context, s);
    ASSERT_EQ(gpu_kernel.kept_elements(), cpu_kernel.kept_elements());
    const auto qkv = random_floats(count(s.batch * s.seq * (s.heads + 2 * s.kv_heads) * s.head_dim), 165);
    const auto dy = random_floats(count(s.batch * s.queries * s.heads * s.head_dim), 166);
    const OnDevice<float> gpu_qkv(qkv), gpu_dy(dy);
    std::vector<float> cpu_y(dy.size()), cpu_kept(count(cpu_kernel.kept_elements()));
    const OnDevice<float> gpu_y(dy.size()), gpu_kept(cpu_kept.size());
    cpu_kernel.forward(qkv.data(), cpu_y.data(), cpu_kept.data());
    gpu_kernel.forward(gpu_qkv.get(), gpu_y.get(), gpu_kept.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");
    expect_matches_cpu(gpu_kept.host(), cpu_kept, "kept");
    const OnDevice<float> cpu_kept_on_gpu(cpu_kept), gpu_dqkv(std::vector<float>(qkv.size(), 7.0f));
    std::vector<float> cpu_dqkv(qkv.size());
    cpu_kernel.backward(qkv.data(), cpu_kept.data(), dy.data(), cpu_dqkv.data());
    gpu_kernel.backward(gpu_qkv.get(), cpu_kept_on_gpu.get(), gpu_dy.get(), gpu_dqkv.get());
    expect_matches_cpu(gpu_dqkv.host(), cpu_dqkv, "dqkv");
  }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
