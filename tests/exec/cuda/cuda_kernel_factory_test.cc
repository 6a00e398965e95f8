// CudaKernelFactory hands out the CUDA kernels behind the backend-neutral interfaces the shared
// ops call: every family, built for the shape it was given, computing what the CPU factory's
// kernel computes; and cuda_layer_ops() builds the shared ops over a context on the current device.

#include "exec/cuda/cuda_kernel_factory.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_layer_ops.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::random_floats;

TEST(CudaKernelFactory, MakesEveryFamilyForItsShape) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaKernelFactory factory(std::make_shared<CudaContext>(0));
  const kernels::Conv2dShape conv{
      .batch = 2, .in_channels = 3, .height = 6, .width = 6, .out_channels = 4, .kernel_h = 3, .kernel_w = 3};
  EXPECT_EQ(factory.make_conv2d(conv)->shape().out_channels, 4);
  EXPECT_EQ(factory.make_linear({.rows = 3, .in_features = 5, .out_features = 2})->shape().in_features, 5);
  const kernels::Pool2dShape pool{
      .batch = 1, .channels = 2, .height = 4, .width = 4, .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};
  EXPECT_EQ(factory.make_pool2d(kernels::PoolKind::max, pool)->kind(), kernels::PoolKind::max);
  EXPECT_EQ(factory.make_adaptive_avgpool({1, 2, 5, 5, 2, 2})->shape().out_height, 2);
  EXPECT_EQ(factory.make_activation(kernels::Activation::gelu_tanh, 10)->elements(), 10);
  EXPECT_EQ(factory.make_add(3, 10)->inputs(), 3);
  EXPECT_EQ(factory.make_concat({{2, 3}, {2, 5}}, 1)->output_dims(), (kernels::Dims{2, 8}));
  EXPECT_EQ(factory.make_batchnorm({.batch = 2, .channels = 3, .spatial = 4})->shape().channels, 3);
  EXPECT_EQ(factory.make_layernorm({.rows = 2, .features = 8})->shape().features, 8);
  EXPECT_EQ(factory.make_dropout(0.25)->probability(), 0.25);
  EXPECT_EQ(factory.make_softmax_cross_entropy({.rows = 2, .classes = 7})->shape().classes, 7);
  EXPECT_EQ(
      factory.make_embedding({.count = 4, .dim = 3, .num_embeddings = 9, .row_begin = 0, .row_end = 9})->shape().dim,
      3);
  EXPECT_EQ(factory.make_batched_matmul({.batch = 2, .m = 3, .k = 4, .n = 5})->shape().n, 5);
  EXPECT_EQ(factory.make_self_attention({.batch = 1, .seq = 4, .heads = 2, .head_dim = 3})->kept_elements(), 32);
}

TEST(CudaKernelFactory, KernelsComputeWhatTheCpuFactorysCompute) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaKernelFactory gpu_factory(std::make_shared<CudaContext>(0));
  cpu::CpuKernelFactory cpu_factory;
  const kernels::LinearShape s{.rows = 4, .in_features = 6, .out_features = 3};
  const std::unique_ptr<kernels::LinearKernel> gpu = gpu_factory.make_linear(s);
  const std::unique_ptr<kernels::LinearKernel> cpu = cpu_factory.make_linear(s);
  const auto x = random_floats(count(s.rows * s.in_features), 201);
  const auto w = random_floats(count(s.out_features * s.in_features), 202);
  const auto b = random_floats(count(s.out_features), 203);
  const testing::OnDevice<float> gpu_x(x), gpu_w(w), gpu_b(b), gpu_y(count(s.rows * s.out_features));
  std::vector<float> cpu_y(count(s.rows * s.out_features));
  gpu->forward(gpu_x.get(), gpu_w.get(), gpu_b.get(), gpu_y.get());
  cpu->forward(x.data(), w.data(), b.data(), cpu_y.data());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
}

TEST(CudaLayerOps, BuildOnTheCurrentDevice) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_TRUE(static_cast<bool>(cuda_layer_ops(std::make_shared<CudaContext>(device, Fp32Math::exact))));
  EXPECT_TRUE(static_cast<bool>(cuda_layer_ops(std::make_shared<CudaContext>(device, Fp32Math::tf32))));
}

}  // namespace
}  // namespace splitbrain::exec::cuda
