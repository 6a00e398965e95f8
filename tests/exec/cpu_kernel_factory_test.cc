// CpuKernelFactory: every make_* gives a kernel behind the interface the shared ops call, built
// for exactly the shape it was asked for; bad shapes fail as they do when built directly.

#include "exec/cpu/cpu_kernel_factory.h"

#include <gtest/gtest.h>

#include <vector>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::Activation;
using kernels::Dims;
using kernels::KernelArgumentError;
using kernels::PoolKind;

TEST(CpuKernelFactory, MakesEachKernelForItsShape) {
  CpuKernelFactory factory;
  kernels::Conv2dShape conv;
  conv.batch = 2;
  conv.in_channels = 3;
  conv.height = conv.width = 5;
  conv.out_channels = 4;
  conv.kernel_h = conv.kernel_w = 3;
  EXPECT_EQ(factory.make_conv2d(conv)->shape().out_height(), 3);
  EXPECT_EQ(factory.make_linear({3, 4, 5, true})->shape().out_features, 5);
  const auto pool = factory.make_pool2d(PoolKind::max, {1, 2, 4, 4, 2, 2, 2, 2});
  EXPECT_EQ(pool->kind(), PoolKind::max);
  EXPECT_GT(pool->workspace_bytes(), 0u);  // max pooling keeps its winners for backward
  EXPECT_EQ(factory.make_adaptive_avgpool({1, 2, 7, 7, 3, 3})->shape().out_height, 3);
  EXPECT_EQ(factory.make_activation(Activation::gelu_tanh, 10)->kind(), Activation::gelu_tanh);
  EXPECT_EQ(factory.make_add(3, 7)->inputs(), 3);
  EXPECT_EQ(factory.make_concat({{2, 3}, {2, 4}}, 1)->output_dims(), (Dims{2, 7}));
  EXPECT_EQ(factory.make_batchnorm({2, 6, 9})->shape().channels, 6);
  EXPECT_EQ(factory.make_layernorm({4, 8, 1e-5})->shape().features, 8);
  EXPECT_EQ(factory.make_dropout(0.25)->probability(), 0.25);
  EXPECT_EQ(factory.make_softmax_cross_entropy({4, 10})->shape().classes, 10);
  EXPECT_EQ(factory.make_embedding({6, 8, 100, 50, 100})->shape().row_begin, 50);
  EXPECT_EQ(factory.make_batched_matmul({2, 3, 4, 5, false, true, 1.0f})->shape().n, 5);
  EXPECT_EQ(factory.make_self_attention({2, 5, 3, 4, true})->kept_elements(), 2 * 3 * 5 * 5);
}

TEST(CpuKernelFactory, BadShapesThrowKernelArgumentError) {
  CpuKernelFactory factory;
  EXPECT_THROW(factory.make_dropout(1.5), KernelArgumentError);
  EXPECT_THROW(factory.make_batchnorm({0, 1, 1}), KernelArgumentError);
  EXPECT_THROW(factory.make_softmax_cross_entropy({2, 0}), KernelArgumentError);
  EXPECT_THROW(factory.make_embedding({1, 2, 10, 5, 11}), KernelArgumentError);  // rows past the table
  EXPECT_THROW(factory.make_adaptive_avgpool({1, 1, 4, 4, 0, 1}), KernelArgumentError);
}

// Host memory is the CPU's own: a queued transfer is done when it returns.
TEST(CpuKernelFactory, ArrayKernelsQueuedTransfersAreDoneWhenQueued) {
  CpuKernelFactory factory;
  const auto array = factory.make_array_kernel();
  std::vector<int32_t> labels(3, 0);
  array->upload_queued(std::vector<int32_t>{5, 6, 7}, labels.data());
  EXPECT_EQ(labels, (std::vector<int32_t>{5, 6, 7}));
  double loss = 0.25;
  const auto download = array->download_queued(&loss);
  loss = 1.0;  // written after the download was queued, as a later kernel would
  EXPECT_EQ(download->wait(), 0.25);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
