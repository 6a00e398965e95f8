// The CUDA RmsNormKernel (cuda/rms_norm.cu) against the CPU's, both made by their factories as
// the shared ops get them: y, the kept 1/rms, dx and the accumulated dweight.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_kernel_factory.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

TEST(CudaRmsNorm, ForwardAndBackwardMatchTheCpu) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // More features than a block has threads, so every thread loops; rows over a few blocks.
  const kernels::RmsNormShape s{.rows = 5, .features = 300, .epsilon = 1e-5};
  cpu::CpuKernelFactory cpu_factory;
  CudaKernelFactory gpu_factory(std::make_shared<CudaContext>(0));
  const auto cpu_kernel = cpu_factory.make_rms_norm(s);
  const auto gpu_kernel = gpu_factory.make_rms_norm(s);
  const auto x = random_floats(count(s.rows * s.features), 121, -2.0f, 3.0f);
  const auto weight = random_floats(count(s.features), 122, 0.5f, 1.5f);
  const auto dy = random_floats(x.size(), 123);
  const OnDevice<float> gpu_x(x), gpu_weight(weight), gpu_dy(dy);
  std::vector<float> cpu_y(x.size()), cpu_inv(count(s.rows));
  const OnDevice<float> gpu_y(x.size()), gpu_inv(count(s.rows));
  cpu_kernel->forward(x.data(), weight.data(), cpu_y.data(), cpu_inv.data());
  gpu_kernel->forward(gpu_x.get(), gpu_weight.get(), gpu_y.get(), gpu_inv.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  expect_matches_cpu(gpu_inv.host(), cpu_inv, "1/rms");

  // Backward starts from the CPU's 1/rms, so it is compared alone.
  const OnDevice<float> cpu_inv_on_gpu(cpu_inv);
  std::vector<float> cpu_dx(x.size()), cpu_dweight(weight.size(), 0.0f);
  const OnDevice<float> gpu_dx(x.size()), gpu_dweight(cpu_dweight);
  cpu_kernel->backward(x.data(), dy.data(), weight.data(), cpu_inv.data(), cpu_dx.data(), cpu_dweight.data());
  gpu_kernel->backward(gpu_x.get(), gpu_dy.get(), gpu_weight.get(), cpu_inv_on_gpu.get(), gpu_dx.get(),
                       gpu_dweight.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
  expect_matches_cpu(gpu_dweight.host(), cpu_dweight, "dweight");

  // Without dx (no input gradient wanted) the weight gradient still accumulates.
  cpu_kernel->backward(x.data(), dy.data(), weight.data(), cpu_inv.data(), nullptr, cpu_dweight.data());
  gpu_kernel->backward(gpu_x.get(), gpu_dy.get(), gpu_weight.get(), cpu_inv_on_gpu.get(), nullptr, gpu_dweight.get());
  expect_matches_cpu(gpu_dweight.host(), cpu_dweight, "dweight, accumulated without dx");
}

}  // namespace
}  // namespace splitbrain::exec::cuda
