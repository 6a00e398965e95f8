// cuda::LayerNormKernel and the CUDA batch-norm phases against their CPU twins. Batch norm runs
// the whole single-rank chain (sums, statistics, normalise, gradient sums, dx) on both backends
// with the CPU's per-channel steps in between, as the runtime does.

#include <gtest/gtest.h>

#include <vector>

#include "exec/cpu/batchnorm.h"
#include "exec/cpu/layernorm.h"
#include "exec/cuda/batchnorm.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/layernorm.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

std::vector<float> to_float(const std::vector<double>& values) { return {values.begin(), values.end()}; }

TEST(CudaLayerNorm, ForwardAndBackwardMatchTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  // More features than a block has threads, so every thread loops.
  const kernels::LayerNormShape s{.rows = 5, .features = 300, .epsilon = 1e-5};
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::LayerNormKernel cpu_kernel(cpu_context, s);
  LayerNormKernel gpu_kernel(gpu_context, s);
  const auto x = random_floats(count(s.rows * s.features), 111, -2.0f, 3.0f);
  const auto gamma = random_floats(count(s.features), 112);
  const auto beta = random_floats(count(s.features), 113);
  const auto dy = random_floats(x.size(), 114);
  const OnDevice<float> gpu_x(x), gpu_gamma(gamma), gpu_beta(beta), gpu_dy(dy);
  std::vector<float> cpu_y(x.size()), cpu_mean(count(s.rows)), cpu_var(count(s.rows));
  const OnDevice<float> gpu_y(x.size()), gpu_mean(count(s.rows)), gpu_var(count(s.rows));
  cpu_kernel.forward(x.data(), gamma.data(), beta.data(), cpu_y.data(), cpu_mean.data(), cpu_var.data());
  gpu_kernel.forward(gpu_x.get(), gpu_gamma.get(), gpu_beta.get(), gpu_y.get(), gpu_mean.get(), gpu_var.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  expect_matches_cpu(gpu_mean.host(), cpu_mean, "mean");
  expect_matches_cpu(gpu_var.host(), cpu_var, "variance");

  // Backward starts from the CPU's statistics, so it is compared alone.
  const OnDevice<float> cpu_mean_on_gpu(cpu_mean), cpu_var_on_gpu(cpu_var);
  std::vector<float> cpu_dx(x.size()), cpu_dgamma(gamma.size()), cpu_dbeta(gamma.size());
  const OnDevice<float> gpu_dx(x.size()), gpu_dgamma(gamma.size()), gpu_dbeta(gamma.size());
  cpu_kernel.backward(x.data(), dy.data(), gamma.data(), cpu_mean.data(), cpu_var.data(), cpu_dx.data(),
                      cpu_dgamma.data(), cpu_dbeta.data());
  gpu_kernel.backward(gpu_x.get(), gpu_dy.get(), gpu_gamma.get(), cpu_mean_on_gpu.get(), cpu_var_on_gpu.get(),
                      gpu_dx.get(), gpu_dgamma.get(), gpu_dbeta.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
  expect_matches_cpu(gpu_dgamma.host(), cpu_dgamma, "dgamma");
  expect_matches_cpu(gpu_dbeta.host(), cpu_dbeta, "dbeta");

  // Without dx (no input gradient wanted) the parameter gradients still accumulate.
  cpu_kernel.backward(x.data(), dy.data(), gamma.data(), cpu_mean.data(), cpu_var.data(), nullptr, cpu_dgamma.data(),
                      cpu_dbeta.data());
  gpu_kernel.backward(gpu_x.get(), gpu_dy.get(), gpu_gamma.get(), cpu_mean_on_gpu.get(), cpu_var_on_gpu.get(), nullptr,
                      gpu_dgamma.get(), gpu_dbeta.get());
  expect_matches_cpu(gpu_dgamma.host(), cpu_dgamma, "dgamma, accumulated without dx");
  expect_matches_cpu(gpu_dbeta.host(), cpu_dbeta, "dbeta, accumulated without dx");
}

// Every phase, with the per-channel sums and statistics in device memory as the op keeps them
// (batchnorm.h); each phase is compared alone, both backends starting from the CPU's values.
TEST(CudaBatchNorm, EveryPhaseMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const kernels::BatchNormShape s{.batch = 3, .channels = 4, .spatial = 37};
  CudaContext gpu_context(0);
  cpu::BatchNormKernel cpu_kernel(s);
  BatchNormKernel gpu_kernel(gpu_context, s);
  const auto c = count(s.channels);
  const auto x = random_floats(count(s.batch * s.channels * s.spatial), 121, -1.0f, 2.0f);
  const auto dy = random_floats(x.size(), 122);
  const auto gamma = random_floats(c, 123), beta = random_floats(c, 124);
  const auto elements = static_cast<double>(s.count());
  const OnDevice<float> gpu_x(x), gpu_dy(dy), gpu_gamma(gamma), gpu_beta(beta);

  std::vector<double> cpu_sum(c), cpu_sum_sq(c);
  const OnDevice<double> gpu_sum(c), gpu_sum_sq(c);
  cpu_kernel.local_sums(x.data(), cpu_sum.data(), cpu_sum_sq.data());
  gpu_kernel.local_sums(gpu_x.get(), gpu_sum.get(), gpu_sum_sq.get());
  expect_matches_cpu(to_float(gpu_sum.host()), to_float(cpu_sum), "sum");
  expect_matches_cpu(to_float(gpu_sum_sq.host()), to_float(cpu_sum_sq), "sum_sq");

  std::vector<float> mean(c), inv_std(c);
  cpu_kernel.statistics(cpu_sum.data(), cpu_sum_sq.data(), elements, 1e-5, mean.data(), inv_std.data());
  const OnDevice<double> cpu_sum_on_gpu(cpu_sum), cpu_sum_sq_on_gpu(cpu_sum_sq);
  const OnDevice<float> gpu_mean(c), gpu_inv_std(c);
  gpu_kernel.statistics(cpu_sum_on_gpu.get(), cpu_sum_sq_on_gpu.get(), elements, 1e-5, gpu_mean.get(),
                        gpu_inv_std.get());
  expect_matches_cpu(gpu_mean.host(), mean, "mean");
  expect_matches_cpu(gpu_inv_std.host(), inv_std, "inv_std");
  EXPECT_THROW(gpu_kernel.statistics(gpu_sum.get(), gpu_sum_sq.get(), 0.0, 1e-5, gpu_mean.get(), gpu_inv_std.get()),
               kernels::KernelArgumentError);

  const OnDevice<float> mean_on_gpu(mean), inv_std_on_gpu(inv_std);
  std::vector<float> cpu_y(x.size());
  const OnDevice<float> gpu_y(x.size());
  cpu_kernel.normalize(x.data(), mean.data(), inv_std.data(), gamma.data(), beta.data(), cpu_y.data());
  gpu_kernel.normalize(gpu_x.get(), mean_on_gpu.get(), inv_std_on_gpu.get(), gpu_gamma.get(), gpu_beta.get(),
                       gpu_y.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  // x == y is allowed.
  const OnDevice<float> in_place_y(x);
  gpu_kernel.normalize(in_place_y.get(), mean_on_gpu.get(), inv_std_on_gpu.get(), gpu_gamma.get(), gpu_beta.get(),
                       in_place_y.get());
  expect_matches_cpu(in_place_y.host(), cpu_y, "y in place");

  std::vector<double> cpu_sum_dy(c), cpu_sum_dy_xhat(c);
  const OnDevice<double> gpu_sum_dy(c), gpu_sum_dy_xhat(c);
  cpu_kernel.backward_local_sums(x.data(), dy.data(), mean.data(), inv_std.data(), cpu_sum_dy.data(),
                                 cpu_sum_dy_xhat.data());
  gpu_kernel.backward_local_sums(gpu_x.get(), gpu_dy.get(), mean_on_gpu.get(), inv_std_on_gpu.get(), gpu_sum_dy.get(),
                                 gpu_sum_dy_xhat.get());
  expect_matches_cpu(to_float(gpu_sum_dy.host()), to_float(cpu_sum_dy), "sum_dy");
  expect_matches_cpu(to_float(gpu_sum_dy_xhat.host()), to_float(cpu_sum_dy_xhat), "sum_dy_xhat");

  // Added to what the gradients hold (an earlier micro-batch's).
  const OnDevice<double> cpu_sum_dy_on_gpu(cpu_sum_dy), cpu_sum_dy_xhat_on_gpu(cpu_sum_dy_xhat);
  auto cpu_dgamma = random_floats(c, 125), cpu_dbeta = random_floats(c, 126);
  const OnDevice<float> gpu_dgamma(cpu_dgamma), gpu_dbeta(cpu_dbeta);
  cpu_kernel.add_parameter_gradients(cpu_sum_dy.data(), cpu_sum_dy_xhat.data(), cpu_dgamma.data(), cpu_dbeta.data());
  gpu_kernel.add_parameter_gradients(cpu_sum_dy_on_gpu.get(), cpu_sum_dy_xhat_on_gpu.get(), gpu_dgamma.get(),
                                     gpu_dbeta.get());
  expect_matches_cpu(gpu_dgamma.host(), cpu_dgamma, "dgamma");
  expect_matches_cpu(gpu_dbeta.host(), cpu_dbeta, "dbeta");

  std::vector<float> cpu_dx(x.size());
  const OnDevice<float> gpu_dx(x.size());
  cpu_kernel.backward_data(x.data(), dy.data(), mean.data(), inv_std.data(), gamma.data(), cpu_sum_dy.data(),
                           cpu_sum_dy_xhat.data(), elements, cpu_dx.data());
  gpu_kernel.backward_data(gpu_x.get(), gpu_dy.get(), mean_on_gpu.get(), inv_std_on_gpu.get(), gpu_gamma.get(),
                           cpu_sum_dy_on_gpu.get(), cpu_sum_dy_xhat_on_gpu.get(), elements, gpu_dx.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
  // dx == dy is allowed.
  const OnDevice<float> in_place_dx(dy);
  gpu_kernel.backward_data(gpu_x.get(), in_place_dx.get(), mean_on_gpu.get(), inv_std_on_gpu.get(), gpu_gamma.get(),
                           cpu_sum_dy_on_gpu.get(), cpu_sum_dy_xhat_on_gpu.get(), elements, in_place_dx.get());
  expect_matches_cpu(in_place_dx.host(), cpu_dx, "dx in place");
  // No host transfer and no wait in any phase: the kernels' own copies are counted.
  EXPECT_EQ(gpu_context.host_transfers().count(), 0);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
