// The CUDA embedding (vocabulary-split table), adaptive average pooling (uneven, overlapping
// bins) and self-attention (causal and not) against their CPU twins.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "exec/cpu/adaptive_avgpool.h"
#include "exec/cpu/attention.h"
#include "exec/cpu/embedding.h"
#include "exec/cuda/adaptive_avgpool.h"
#include "exec/cuda/attention.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/embedding.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::random_floats;

TEST(CudaEmbedding, GatherAndScatterAddOnAVocabularyBlock) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // This rank holds rows [4, 9) of 12; ids outside give zeros, repeated ids add up in backward.
  const kernels::EmbeddingShape s{.count = 8, .dim = 5, .num_embeddings = 12, .row_begin = 4, .row_end = 9};
  CudaContext gpu_context(0);
  cpu::EmbeddingKernel cpu_kernel(s);
  EmbeddingKernel gpu_kernel(gpu_context, s);
  const std::vector<float> ids{4, 0, 8, 5, 5, 11, 4, 6};
  const auto table = random_floats(count((s.row_end - s.row_begin) * s.dim), 131);
  std::vector<float> cpu_y(count(s.count * s.dim)), gpu_y(cpu_y.size());
  cpu_kernel.forward(ids.data(), table.data(), cpu_y.data());
  gpu_kernel.forward(ids.data(), table.data(), gpu_y.data());
  EXPECT_EQ(gpu_y, cpu_y);  // copies and zeros: exactly equal

  const auto dy = random_floats(cpu_y.size(), 132);
  auto cpu_dtable = random_floats(table.size(), 133);  // backward adds into what is there
  auto gpu_dtable = cpu_dtable;
  cpu_kernel.backward(ids.data(), dy.data(), cpu_dtable.data());
  gpu_kernel.backward(ids.data(), dy.data(), gpu_dtable.data());
  expect_matches_cpu(gpu_dtable, cpu_dtable, "dtable");
}

TEST(CudaAdaptiveAvgPool, UnevenOverlappingBins) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // 7 -> 3 rows and 5 -> 2 columns overlap; 6x6 -> 1x1 is global average pooling.
  const kernels::AdaptiveAvgPoolShape overlapping{2, 3, 7, 5, 3, 2}, global{1, 4, 6, 6, 1, 1};
  for (const kernels::AdaptiveAvgPoolShape& s : {overlapping, global}) {
    CudaContext gpu_context(0);
    cpu::AdaptiveAvgPoolKernel cpu_kernel(s);
    AdaptiveAvgPoolKernel gpu_kernel(gpu_context, s);
    const auto x = random_floats(count(s.batch * s.channels * s.height * s.width), 141);
    const auto dy = random_floats(count(s.batch * s.channels * s.out_height * s.out_width), 142);
    std::vector<float> cpu_y(dy.size()), gpu_y(dy.size()), cpu_dx(x.size()), gpu_dx(x.size());
    cpu_kernel.forward(x.data(), cpu_y.data());
    gpu_kernel.forward(x.data(), gpu_y.data());
    expect_matches_cpu(gpu_y, cpu_y, "y");
    cpu_kernel.backward(dy.data(), cpu_dx.data());
    gpu_kernel.backward(dy.data(), gpu_dx.data());
    expect_matches_cpu(gpu_dx, cpu_dx, "dx");
  }
}

TEST(CudaSelfAttention, ForwardAndBackwardMatchTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  for (const bool causal : {true, false}) {
    const kernels::AttentionShape s{.batch = 2, .seq = 5, .heads = 3, .head_dim = 4, .causal = causal};
    cpu::CpuContext cpu_context;
    CudaContext gpu_context(0);
    cpu::SelfAttentionKernel cpu_kernel(cpu_context, s);
    SelfAttentionKernel gpu_kernel(gpu_context, s);
    ASSERT_EQ(gpu_kernel.probs_elements(), cpu_kernel.probs_elements());
    const auto qkv = random_floats(count(s.batch * s.seq * s.heads * 3 * s.head_dim), 151);
    const auto dy = random_floats(count(s.batch * s.seq * s.heads * s.head_dim), 152);
    std::vector<float> cpu_y(dy.size()), gpu_y(dy.size());
    std::vector<float> cpu_probs(count(cpu_kernel.probs_elements())), gpu_probs(cpu_probs.size());
    cpu_kernel.forward(qkv.data(), cpu_y.data(), cpu_probs.data());
    gpu_kernel.forward(qkv.data(), gpu_y.data(), gpu_probs.data());
    expect_matches_cpu(gpu_y, cpu_y, "y");
    expect_matches_cpu(gpu_probs, cpu_probs, "probs");
    std::vector<float> cpu_dqkv(qkv.size()), gpu_dqkv(qkv.size());
    cpu_kernel.backward(qkv.data(), cpu_probs.data(), dy.data(), cpu_dqkv.data());
    gpu_kernel.backward(qkv.data(), cpu_probs.data(), dy.data(), gpu_dqkv.data());
    expect_matches_cpu(gpu_dqkv, cpu_dqkv, causal ? "dqkv (causal)" : "dqkv");
  }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
