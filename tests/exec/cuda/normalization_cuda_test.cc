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
#include "exec/kernels/batchnorm_statistics.h"
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

// The per-channel mean, inv_std and sums stay host vectors, as the op keeps them (batchnorm.h).
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

  std::vector<double> cpu_sum(c), cpu_sum_sq(c), gpu_sum(c), gpu_sum_sq(c);
  cpu_kernel.local_sums(x.data(), cpu_sum.data(), cpu_sum_sq.data());
  gpu_kernel.local_sums(gpu_x.get(), gpu_sum.data(), gpu_sum_sq.data());
  expect_matches_cpu(to_float(gpu_sum), to_float(cpu_sum), "sum");
  expect_matches_cpu(to_float(gpu_sum_sq), to_float(cpu_sum_sq), "sum_sq");

  // From here on both backends start from the CPU's statistics, so each phase is compared alone.
  std::vector<float> mean(c), inv_std(c);
  kernels::batchnorm_statistics(s.channels, cpu_sum.data(), cpu_sum_sq.data(), elements, 1e-5, mean.data(),
                                inv_std.data());
  std::vector<float> cpu_y(x.size());
  const OnDevice<float> gpu_y(x.size());
  cpu_kernel.normalize(x.data(), mean.data(), inv_std.data(), gamma.data(), beta.data(), cpu_y.data());
  gpu_kernel.normalize(gpu_x.get(), mean.data(), inv_std.data(), gpu_gamma.get(), gpu_beta.get(), gpu_y.get());
  expect_matches_cpu(gpu_y.host(), cpu_y, "y");
  // x == y is allowed.
  const OnDevice<float> in_place_y(x);
  gpu_kernel.normalize(in_place_y.get(), mean.data(), inv_std.data(), gpu_gamma.get(), gpu_beta.get(),
                       in_place_y.get());
  expect_matches_cpu(in_place_y.host(), cpu_y, "y in place");

  std::vector<double> cpu_sum_dy(c), cpu_sum_dy_xhat(c), gpu_sum_dy(c), gpu_sum_dy_xhat(c);
  cpu_kernel.backward_local_sums(x.data(), dy.data(), mean.data(), inv_std.data(), cpu_sum_dy.data(),
                                 cpu_sum_dy_xhat.data());
  gpu_kernel.backward_local_sums(gpu_x.get(), gpu_dy.get(), mean.data(), inv_std.data(), gpu_sum_dy.data(),
                                 gpu_sum_dy_xhat.data());
  expect_matches_cpu(to_float(gpu_sum_dy), to_float(cpu_sum_dy), "sum_dy");
  expect_matches_cpu(to_float(gpu_sum_dy_xhat), to_float(cpu_sum_dy_xhat), "sum_dy_xhat");

  std::vector<float> cpu_dx(x.size());
  const OnDevice<float> gpu_dx(x.size());
  cpu_kernel.backward_data(x.data(), dy.data(), mean.data(), inv_std.data(), gamma.data(), cpu_sum_dy.data(),
                           cpu_sum_dy_xhat.data(), elements, cpu_dx.data());
  gpu_kernel.backward_data(gpu_x.get(), gpu_dy.get(), mean.data(), inv_std.data(), gpu_gamma.get(), cpu_sum_dy.data(),
                           cpu_sum_dy_xhat.data(), elements, gpu_dx.get());
  expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");
  // dx == dy is allowed.
  const OnDevice<float> in_place_dx(dy);
  gpu_kernel.backward_data(gpu_x.get(), in_place_dx.get(), mean.data(), inv_std.data(), gpu_gamma.get(),
                           cpu_sum_dy.data(), cpu_sum_dy_xhat.data(), elements, in_place_dx.get());
  expect_matches_cpu(in_place_dx.host(), cpu_dx, "dx in place");
}

}  // namespace
}  // namespace splitbrain::exec::cuda
