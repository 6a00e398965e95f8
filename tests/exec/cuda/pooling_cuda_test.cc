// cuda::Pool2dKernel against cpu::Pool2dKernel, forward and backward: max and average, with
// symmetric padding, per-side padding and ceil_mode, overlapping windows included. Each backend's
// max workspace is its own record of the winners; both are as large as the cost model prices
// them (model::max_pool_index_bytes per output element).

#include "exec/cuda/pooling.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "exec/cpu/pooling.h"
#include "exec/cuda/cuda_device.h"
#include "exec/kernels/kernel_argument_error.h"
#include "model/max_pool_index.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

void expect_pool_matches_cpu(kernels::PoolKind kind, const kernels::Pool2dShape& s) {
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::Pool2dKernel cpu_kernel(cpu_context, kind, s);
  Pool2dKernel gpu_kernel(gpu_context, kind, s);
  const int64_t x_elements = s.batch * s.channels * s.height * s.width;
  const int64_t y_elements = s.batch * s.channels * s.out_height() * s.out_width();
  const auto x = random_floats(count(x_elements), 31);
  const auto dy = random_floats(count(y_elements), 32);
  std::vector<std::byte> cpu_workspace(cpu_kernel.workspace_bytes());
  OnDevice<std::byte> gpu_workspace(gpu_kernel.workspace_bytes());
  const std::size_t priced_bytes =
      kind == kernels::PoolKind::max ? count(y_elements * model::max_pool_index_bytes(s.kernel_h * s.kernel_w)) : 0;
  EXPECT_EQ(gpu_kernel.workspace_bytes(), priced_bytes);

  std::vector<float> cpu_y(count(y_elements));
  OnDevice<float> gpu_x(x), gpu_y(count(y_elements));
  cpu_kernel.forward(x.data(), cpu_y.data(), cpu_workspace.data());
  gpu_kernel.forward(gpu_x.get(), gpu_y.get(), gpu_workspace.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");

  std::vector<float> cpu_dx(count(x_elements));
  OnDevice<float> gpu_dy(dy), gpu_dx(count(x_elements));
  cpu_kernel.backward(dy.data(), cpu_workspace.data(), cpu_dx.data());
  gpu_kernel.backward(gpu_dy.get(), gpu_workspace.get(), gpu_dx.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
}

const kernels::Pool2dShape kSymmetric{.batch = 2,
                                      .channels = 3,
                                      .height = 8,
                                      .width = 9,
                                      .kernel_h = 3,
                                      .kernel_w = 3,
                                      .stride_h = 2,
                                      .stride_w = 2,
                                      .pad_top = 1,
                                      .pad_bottom = 1,
                                      .pad_left = 1,
                                      .pad_right = 1};
// A height split's first rank (top padding only) with uneven columns.
const kernels::Pool2dShape kPerSide{.batch = 2,
                                    .channels = 2,
                                    .height = 7,
                                    .width = 8,
                                    .kernel_h = 3,
                                    .kernel_w = 2,
                                    .stride_h = 2,
                                    .stride_w = 2,
                                    .pad_top = 1,
                                    .pad_bottom = 0,
                                    .pad_left = 1,
                                    .pad_right = 0};
// ceil_mode's extra window (max pooling only: average refuses the overhang, as on the CPU).
const kernels::Pool2dShape kCeil{.batch = 1,
                                 .channels = 3,
                                 .height = 8,
                                 .width = 8,
                                 .kernel_h = 3,
                                 .kernel_w = 3,
                                 .stride_h = 2,
                                 .stride_w = 2,
                                 .ceil_mode = true};

TEST(CudaPool2d, MaxWithSymmetricPadding) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_pool_matches_cpu(kernels::PoolKind::max, kSymmetric);
}

TEST(CudaPool2d, MaxWithPerSidePadding) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_pool_matches_cpu(kernels::PoolKind::max, kPerSide);
}

TEST(CudaPool2d, MaxWithCeilMode) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_pool_matches_cpu(kernels::PoolKind::max, kCeil);
}

TEST(CudaPool2d, AverageCountsThePadding) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_pool_matches_cpu(kernels::PoolKind::average, kSymmetric);
  expect_pool_matches_cpu(kernels::PoolKind::average, kPerSide);
}

TEST(CudaPool2d, AverageRefusesAnOverhangingCeilWindowAsTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext gpu_context(0);
  EXPECT_THROW(Pool2dKernel(gpu_context, kernels::PoolKind::average, kCeil), kernels::KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
