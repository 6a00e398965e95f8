// cuda::AddKernel and cuda::ConcatKernel against their CPU twins (concat forward and split, on
// a middle axis and on the first).

#include <gtest/gtest.h>

#include <array>
#include <string>
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
using testing::OnDevice;
using testing::random_floats;

TEST(CudaAdd, SumsThreeInputsAsTheCpuIntoItsOutputOrOneOfItsInputs) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  constexpr int64_t kElements = 777;
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::AddKernel cpu_kernel(cpu_context, 3, kElements);
  AddKernel gpu_kernel(gpu_context, 3, kElements);
  const auto a = random_floats(count(kElements), 71), b = random_floats(count(kElements), 72),
             c = random_floats(count(kElements), 73);
  const std::array<const float*, 3> xs{a.data(), b.data(), c.data()};
  std::vector<float> cpu_y(a.size());
  cpu_kernel.forward(xs, cpu_y.data());
  // y apart (-1); y the first input (the sum runs in it); y a later one (read after x_0 is summed).
  for (const int y_input : {-1, 0, 2}) {
    const OnDevice<float> gpu_a(a), gpu_b(b), gpu_c(c), gpu_apart(a.size());
    const std::array<const float*, 3> gpu_xs{gpu_a.get(), gpu_b.get(), gpu_c.get()};
    const OnDevice<float>& gpu_y = y_input == -1 ? gpu_apart : y_input == 0 ? gpu_a : gpu_c;
    gpu_kernel.forward(gpu_xs, gpu_y.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y as input " + std::to_string(y_input));
  }
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
  std::vector<OnDevice<float>> gpu_inputs;
  std::vector<const float*> gpu_xs;
  gpu_inputs.reserve(inputs.size());
  for (const auto& input : inputs) {
    gpu_inputs.emplace_back(input);
    gpu_xs.push_back(gpu_inputs.back().get());
  }
  int64_t out_elements = 1;
  for (const int64_t d : cpu_kernel.output_dims()) out_elements *= d;
  std::vector<float> cpu_y(count(out_elements));
  cpu_kernel.forward(xs, cpu_y.data());
  const OnDevice<float> gpu_y(count(out_elements));
  gpu_kernel.forward(gpu_xs, gpu_y.get());
  EXPECT_EQ(gpu_y.host(), cpu_y);  // copies: exactly equal

  const auto dy = random_floats(count(out_elements), 90);
  std::vector<std::vector<float>> cpu_dxs;
  std::vector<OnDevice<float>> gpu_dxs;
  cpu_dxs.reserve(inputs.size());
  gpu_dxs.reserve(inputs.size());
  std::vector<float*> cpu_ptrs, gpu_ptrs;
  for (const auto& input : inputs) {
    cpu_dxs.emplace_back(input.size());
    cpu_ptrs.push_back(cpu_dxs.back().data());
    gpu_dxs.emplace_back(input.size());
    gpu_ptrs.push_back(gpu_dxs.back().get());
  }
  cpu_kernel.backward(dy.data(), cpu_ptrs);
  const OnDevice<float> gpu_dy(dy);
  gpu_kernel.backward(gpu_dy.get(), gpu_ptrs);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(gpu_dxs[i].host(), cpu_dxs[i]) << "dx of input " << i;  // copies: exactly equal
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
