// The CUDA SwigluKernel (cuda/swiglu.cu) against the CPU's, both made by their factories as the
// shared ops get them: y, d_gate and d_up, with gates past where sigmoid saturates.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_kernel_factory.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

TEST(CudaSwiglu, ForwardAndBackwardMatchTheCpu) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // More elements than one block's threads, so the grid-stride loop runs.
  const int64_t elements = 5000;
  cpu::CpuKernelFactory cpu_factory;
  CudaKernelFactory gpu_factory(std::make_shared<CudaContext>(0));
  const auto cpu_kernel = cpu_factory.make_swiglu(elements);
  const auto gpu_kernel = gpu_factory.make_swiglu(elements);
  auto gate = random_floats(static_cast<std::size_t>(elements), 131, -10.0f, 10.0f);
  gate[0] = -40.0f, gate[1] = 40.0f, gate[2] = 0.0f;
  const auto up = random_floats(gate.size(), 132, -2.0f, 2.0f);
  const auto dy = random_floats(gate.size(), 133);
  const OnDevice<float> gpu_gate(gate), gpu_up(up), gpu_dy(dy);
  std::vector<float> cpu_y(gate.size()), cpu_d_gate(gate.size()), cpu_d_up(gate.size());
  const OnDevice<float> gpu_y(gate.size()), gpu_d_gate(gate.size()), gpu_d_up(gate.size());
  cpu_kernel->forward(gate.data(), up.data(), cpu_y.data());
  gpu_kernel->forward(gpu_gate.get(), gpu_up.get(), gpu_y.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  cpu_kernel->backward(gate.data(), up.data(), dy.data(), cpu_d_gate.data(), cpu_d_up.data());
  gpu_kernel->backward(gpu_gate.get(), gpu_up.get(), gpu_dy.get(), gpu_d_gate.get(), gpu_d_up.get());
  expect_matches_cpu(gpu_d_gate.host(), cpu_d_gate, "d_gate");
  expect_matches_cpu(gpu_d_up.host(), cpu_d_up, "d_up");
}

}  // namespace
}  // namespace splitbrain::exec::cuda
