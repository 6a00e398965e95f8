// cuda::AddKernel and cuda::ConcatKernel against their CPU twins (concat forward and split, on
// a middle axis and on the first).

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "exec/cpu/concat.h"
#include "exec/cpu/elementwise_add.h"
#include "exec/cuda/concat.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/elementwise_add.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::random_floats;

TEST(CudaAdd, SumsThreeInputsAsTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  constexpr int64_t kElements = 777;
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::AddKernel cpu_kernel(cpu_context, 3, kElements);
  AddKernel gpu_kernel(gpu_context, 3, kElements);
  const auto a = random_floats(count(kElements), 71), b = random_floats(count(kElements), 72),
             c = random_floats(count(kElements), 73);
  const std::array<const float*, 3> xs{a.data(), b.data(), c.data()};
  std::vector<float> cpu_y(a.size()), gpu_y(a.size());
  cpu_kernel.forward(xs, cpu_y.data());
  gpu_kernel.forward(xs, gpu_y.data());
  expect_matches_cpu(gpu_y, cpu_y, "y");
}

void expect_concat_matches_cpu(const std::vector<kernels::Dims>& dims, int axis) {
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::ConcatKernel cpu_kernel(cpu_context, dims, axis);
  ConcatKernel gpu_kernel(gpu_context, dims, axis);
  ASSERT_EQ(gpu_kernel.output_dims(), cpu_kernel.output_dims());
  std::vector<std::vector<float>> inputs;
  std::vector<const float*> xs;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    int64_t elements = 1;
    for (const int64_t d : dims[i]) elements *= d;
    inputs.push_back(random_floats(count(elements), 80 + static_cast<uint32_t>(i)));
    xs.push_back(inputs.back().data());
  }
  int64_t out_elements = 1;
  for (const int64_t d : cpu_kernel.output_dims()) out_elements *= d;
  std::vector<float> cpu_y(count(out_elements)), gpu_y(count(out_elements));
  cpu_kernel.forward(xs, cpu_y.data());
  gpu_kernel.forward(xs, gpu_y.data());
  EXPECT_EQ(gpu_y, cpu_y);  // copies: exactly equal

  const auto dy = random_floats(count(out_elements), 90);
  std::vector<std::vector<float>> cpu_dxs, gpu_dxs;
  std::vector<float*> cpu_ptrs, gpu_ptrs;
  for (const auto& input : inputs) {
    cpu_dxs.emplace_back(input.size());
    gpu_dxs.emplace_back(input.size());
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    cpu_ptrs.push_back(cpu_dxs[i].data());
    gpu_ptrs.push_back(gpu_dxs[i].data());
  }
  cpu_kernel.backward(dy.data(), cpu_ptrs);
  gpu_kernel.backward(dy.data(), gpu_ptrs);
  EXPECT_EQ(gpu_dxs, cpu_dxs);
}

TEST(CudaConcat, ChannelsOfNchw) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_concat_matches_cpu({{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 4, 4, 5}}, 1);
}

TEST(CudaConcat, FirstAxis) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  expect_concat_matches_cpu({{2, 6}, {3, 6}}, 0);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
