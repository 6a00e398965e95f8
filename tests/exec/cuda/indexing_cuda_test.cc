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
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

// The ids come as device memory (token ids) or host memory (learned positions): both are taken.
TEST(CudaEmbedding, GatherAndScatterAddOnAVocabularyBlock) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // This rank holds rows [4, 9) of 12; ids outside give zeros, repeated ids add up in backward.
  const kernels::EmbeddingShape s{.count = 8, .dim = 5, .num_embeddings = 12, .row_begin = 4, .row_end = 9};
  CudaContext gpu_context(0);
  cpu::EmbeddingKernel cpu_kernel(s);
  EmbeddingKernel gpu_kernel(gpu_context, s);
  const std::vector<float> ids{4, 0, 8, 5, 5, 11, 4, 6};
  const OnDevice<float> ids_on_gpu(ids);
  const auto table = random_floats(count((s.row_end - s.row_begin) * s.dim), 131);
  const OnDevice<float> gpu_table(table);
  std::vector<float> cpu_y(count(s.count * s.dim));
  cpu_kernel.forward(ids.data(), table.data(), cpu_y.data());
  const auto dy = random_floats(cpu_y.size(), 132);
  const OnDevice<float> gpu_dy(dy);
  auto cpu_dtable = random_floats(table.size(), 133);  // backward adds into what is there
  const OnDevice<float> gpu_dtable(cpu_dtable);
  cpu_kernel.backward(ids.data(), dy.data(), cpu_dtable.data());

  for (const bool ids_on_device : {true, false}) {
    SCOPED_TRACE(ids_on_device ? "ids in device memory" : "ids in host memory");
    const float* gpu_ids = ids_on_device ? ids_on_gpu.get() : ids.data();
    const OnDevice<float> gpu_y(cpu_y.size());
    gpu_kernel.forward(gpu_ids, gpu_table.get(), gpu_y.get());
    EXPECT_EQ(gpu_y.host(), cpu_y);  // copies and zeros: exactly equal

    const OnDevice<float> dtable(gpu_dtable.host());
    gpu_kernel.backward(gpu_ids, gpu_dy.get(), dtable.get());
    expect_matches_cpu(dtable.host(), cpu_dtable, "dtable");
  }
}

// Host ids are checked where they lie; device ids are the caller's to check (the op checks them
// where they came from), so the kernel never waits to read them back: a bad one there reads and
// writes nothing, and nothing crosses to the host.
TEST(CudaEmbedding, HostIdsOutsideTheTableAreRejectedDeviceIdsReadNothing) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const kernels::EmbeddingShape s{.count = 3, .dim = 2, .num_embeddings = 6, .row_begin = 0, .row_end = 6};
  CudaContext gpu_context(0);
  EmbeddingKernel gpu_kernel(gpu_context, s);
  const std::vector<float> ids{1, 6, -1};  // 6 is past the table, -1 before it
  const OnDevice<float> ids_on_gpu(ids), y(count(3 * 2));
  const OnDevice<float> table(std::vector<float>{0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51});
  EXPECT_THROW(gpu_kernel.forward(ids.data(), table.get(), y.get()), kernels::KernelArgumentError);
  EXPECT_THROW(gpu_kernel.backward(ids.data(), y.get(), table.get()), kernels::KernelArgumentError);
  const int64_t transfers = gpu_context.host_transfers().count();
  gpu_kernel.forward(ids_on_gpu.get(), table.get(), y.get());
  EXPECT_EQ(y.host(), (std::vector<float>{10, 11, 0, 0, 0, 0}));
  const OnDevice<float> dtable(count(6 * 2));
  gpu_kernel.backward(ids_on_gpu.get(), y.get(), dtable.get());
  EXPECT_EQ(dtable.host(), (std::vector<float>{0, 0, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(gpu_context.host_transfers().count(), transfers);
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
    const OnDevice<float> gpu_x(x), gpu_dy(dy), gpu_y(dy.size()), gpu_dx(x.size());
    std::vector<float> cpu_y(dy.size()), cpu_dx(x.size());
    cpu_kernel.forward(x.data(), cpu_y.data());
    gpu_kernel.forward(gpu_x.get(), gpu_y.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");
    cpu_kernel.backward(dy.data(), cpu_dx.data());
    gpu_kernel.backward(gpu_dy.get(), gpu_dx.get());
    expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
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
    ASSERT_EQ(gpu_kernel.kept_elements(), cpu_kernel.kept_elements());
    const auto qkv = random_floats(count(s.batch * s.seq * s.heads * 3 * s.head_dim), 151);
    const auto dy = random_floats(count(s.batch * s.seq * s.heads * s.head_dim), 152);
    const OnDevice<float> gpu_qkv(qkv), gpu_dy(dy);
    std::vector<float> cpu_y(dy.size()), cpu_probs(count(cpu_kernel.kept_elements()));
    const OnDevice<float> gpu_y(dy.size()), gpu_probs(cpu_probs.size());
    cpu_kernel.forward(qkv.data(), cpu_y.data(), cpu_probs.data());
    gpu_kernel.forward(gpu_qkv.get(), gpu_y.get(), gpu_probs.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");
    expect_matches_cpu(gpu_probs.host(), cpu_probs, "probs");
    // Backward starts from the CPU's probabilities, so it is compared alone.
    const OnDevice<float> cpu_probs_on_gpu(cpu_probs), gpu_dqkv(qkv.size());
    std::vector<float> cpu_dqkv(qkv.size());
    cpu_kernel.backward(qkv.data(), cpu_probs.data(), dy.data(), cpu_dqkv.data());
    gpu_kernel.backward(gpu_qkv.get(), cpu_probs_on_gpu.get(), gpu_dy.get(), gpu_dqkv.get());
    expect_matches_cpu(gpu_dqkv.host(), cpu_dqkv, causal ? "dqkv (causal)" : "dqkv");
  }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
