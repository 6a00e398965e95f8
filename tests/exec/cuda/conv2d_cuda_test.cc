// cuda::Conv2dKernel against cpu::Conv2dKernel: forward, backward data, backward weights and
// bias (overwritten and accumulated), with groups, stride, dilation, and per-side padding that
// cuDNN cannot express itself (padded explicitly by the CUDA kernel). The CUDA kernel gets device
// copies of the CPU kernel's inputs (OnDevice).

#include "exec/cuda/conv2d.h"

#include <gtest/gtest.h>

#include <vector>

#include "exec/cpu/conv2d.h"
#include "exec/cuda/cuda_device.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

void expect_conv_matches_cpu(const kernels::Conv2dShape& s) {
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::Conv2dKernel cpu_kernel(cpu_context, s);
  Conv2dKernel gpu_kernel(gpu_context, s);
  const int64_t x_elements = s.batch * s.in_channels * s.height * s.width;
  const int64_t y_elements = s.batch * s.out_channels * s.out_height() * s.out_width();
  const int64_t w_elements = s.out_channels * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w;
  const auto x = random_floats(count(x_elements), 1);
  const auto w = random_floats(count(w_elements), 2);
  const auto b = random_floats(count(s.out_channels), 3);
  const auto dy = random_floats(count(y_elements), 4);

  const OnDevice<float> gpu_x(x), gpu_w(w), gpu_b(b), gpu_dy(dy);

  std::vector<float> cpu_y(count(y_elements));
  const OnDevice<float> gpu_y(count(y_elements));
  cpu_kernel.forward(x.data(), w.data(), b.data(), cpu_y.data());
  gpu_kernel.forward(gpu_x.get(), gpu_w.get(), gpu_b.get(), gpu_y.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");

  std::vector<float> cpu_dx(count(x_elements));
  const OnDevice<float> gpu_dx(count(x_elements));
  cpu_kernel.backward_data(dy.data(), w.data(), cpu_dx.data());
  gpu_kernel.backward_data(gpu_dy.get(), gpu_w.get(), gpu_dx.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");

  std::vector<float> cpu_dw(count(w_elements)), cpu_db(count(s.out_channels));
  const OnDevice<float> gpu_dw(count(w_elements)), gpu_db(count(s.out_channels));
  cpu_kernel.backward_weights(x.data(), dy.data(), cpu_dw.data(), cpu_db.data());
  gpu_kernel.backward_weights(gpu_x.get(), gpu_dy.get(), gpu_dw.get(), gpu_db.get());
  expect_matches_cpu(gpu_dw.host(), cpu_dw, "dw");
  if (s.bias) expect_matches_cpu(gpu_db.host(), cpu_db, "db");

  // Accumulation starts from earlier micro-batches' gradients, not zeros, so beta = 1 is tested:
  // cuDNN adds straight into the caller's dw and db.
  auto cpu_sum_dw = random_floats(count(w_elements), 5), cpu_sum_db = random_floats(count(s.out_channels), 6);
  const OnDevice<float> gpu_sum_dw(cpu_sum_dw), gpu_sum_db(cpu_sum_db);
  cpu_kernel.accumulate_weight_gradients(x.data(), dy.data(), cpu_sum_dw.data(), cpu_sum_db.data());
  gpu_kernel.accumulate_weight_gradients(gpu_x.get(), gpu_dy.get(), gpu_sum_dw.get(), gpu_sum_db.get());
  expect_matches_cpu(gpu_sum_dw.host(), cpu_sum_dw, "accumulated dw");
  if (s.bias) expect_matches_cpu(gpu_sum_db.host(), cpu_sum_db, "accumulated db");

  // Without db: the weights only.
  cpu_kernel.accumulate_weight_gradients(x.data(), dy.data(), cpu_sum_dw.data(), nullptr);
  gpu_kernel.accumulate_weight_gradients(gpu_x.get(), gpu_dy.get(), gpu_sum_dw.get(), nullptr);
  expect_matches_cpu(gpu_sum_dw.host(), cpu_sum_dw, "accumulated dw without db");
}

TEST(CudaConv2d, SamePaddingWithBias) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_conv_matches_cpu({.batch = 2,
                           .in_channels = 3,
                           .height = 9,
                           .width = 8,
                           .out_channels = 4,
                           .kernel_h = 3,
                           .kernel_w = 3,
                           .pad_top = 1,
                           .pad_bottom = 1,
                           .pad_left = 1,
                           .pad_right = 1});
}

TEST(CudaConv2d, GroupsStrideDilation) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_conv_matches_cpu({.batch = 2,
                           .in_channels = 4,
                           .height = 11,
                           .width = 10,
                           .out_channels = 6,
                           .kernel_h = 3,
                           .kernel_w = 2,
                           .stride_h = 2,
                           .stride_w = 1,
                           .pad_top = 2,
                           .pad_bottom = 2,
                           .pad_left = 1,
                           .pad_right = 1,
                           .dilation_h = 2,
                           .dilation_w = 1,
                           .groups = 2});
}

TEST(CudaConv2d, DepthwiseWithoutBias) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_conv_matches_cpu({.batch = 1,
                           .in_channels = 5,
                           .height = 7,
                           .width = 7,
                           .out_channels = 5,
                           .kernel_h = 3,
                           .kernel_w = 3,
                           .pad_top = 1,
                           .pad_bottom = 1,
                           .pad_left = 1,
                           .pad_right = 1,
                           .groups = 5,
                           .bias = false});
}

// The first rank of a height split: its block gets halo rows below, so only the top is padded.
TEST(CudaConv2d, PaddedOnTopOnly) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_conv_matches_cpu({.batch = 2,
                           .in_channels = 3,
                           .height = 6,
                           .width = 8,
                           .out_channels = 4,
                           .kernel_h = 3,
                           .kernel_w = 3,
                           .pad_top = 1,
                           .pad_bottom = 0,
                           .pad_left = 1,
                           .pad_right = 1});
}

// The last rank of a strided height split, and uneven left/right padding.
TEST(CudaConv2d, PaddedAtTheBottomAndUnevenSides) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_conv_matches_cpu({.batch = 1,
                           .in_channels = 2,
                           .height = 9,
                           .width = 7,
                           .out_channels = 3,
                           .kernel_h = 3,
                           .kernel_w = 3,
                           .stride_h = 2,
                           .stride_w = 2,
                           .pad_top = 0,
                           .pad_bottom = 2,
                           .pad_left = 2,
                           .pad_right = 0,
                           .groups = 1});
}

}  // namespace
}  // namespace splitbrain::exec::cuda
