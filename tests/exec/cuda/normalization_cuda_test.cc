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
  std::vector<float> cpu_y(x.size()), gpu_y(x.size());
  std::vector<float> cpu_mean(count(s.rows)), gpu_mean(count(s.rows)), cpu_var(count(s.rows)), gpu_var(count(s.rows));
  cpu_kernel.forward(x.data(), gamma.data(), beta.data(), cpu_y.data(), cpu_mean.data(), cpu_var.data());
  gpu_kernel.forward(x.data(), gamma.data(), beta.data(), gpu_y.data(), gpu_mean.data(), gpu_var.data());
  expect_matches_cpu(gpu_y, cpu_y, "y");
  expect_matches_cpu(gpu_mean, cpu_mean, "mean");
  expect_matches_cpu(gpu_var, cpu_var, "variance");

  std::vector<float> cpu_dx(x.size()), gpu_dx(x.size());
  std::vector<float> cpu_dgamma(gamma.size()), gpu_dgamma(gamma.size()), cpu_dbeta(gamma.size()),
      gpu_dbeta(gamma.size());
  cpu_kernel.backward(x.data(), dy.data(), gamma.data(), cpu_mean.data(), cpu_var.data(), cpu_dx.data(),
                      cpu_dgamma.data(), cpu_dbeta.data());
  gpu_kernel.backward(x.data(), dy.data(), gamma.data(), cpu_mean.data(), cpu_var.data(), gpu_dx.data(),
                      gpu_dgamma.data(), gpu_dbeta.data());
  expect_matches_cpu(gpu_dx, cpu_dx, "dx");
  expect_matches_cpu(gpu_dgamma, cpu_dgamma, "dgamma");
  expect_matches_cpu(gpu_dbeta, cpu_dbeta, "dbeta");
}

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

  std::vector<double> cpu_sum(c), cpu_sum_sq(c), gpu_sum(c), gpu_sum_sq(c);
  cpu_kernel.local_sums(x.data(), cpu_sum.data(), cpu_sum_sq.data());
  gpu_kernel.local_sums(x.data(), gpu_sum.data(), gpu_sum_sq.data());
  expect_matches_cpu(to_float(gpu_sum), to_float(cpu_sum), "sum");
  expect_matches_cpu(to_float(gpu_sum_sq), to_float(cpu_sum_sq), "sum_sq");

  // From here on both backends start from the CPU's statistics, so each phase is compared alone.
  std::vector<float> mean(c), inv_std(c);
  kernels::batchnorm_statistics(s.channels, cpu_sum.data(), cpu_sum_sq.data(), elements, 1e-5, mean.data(),
                                inv_std.data());
  std::vector<float> cpu_y(x.size()), gpu_y(x.size());
  cpu_kernel.normalize(x.data(), mean.data(), inv_std.data(), gamma.data(), beta.data(), cpu_y.data());
  gpu_kernel.normalize(x.data(), mean.data(), inv_std.data(), gamma.data(), beta.data(), gpu_y.data());
  expect_matches_cpu(gpu_y, cpu_y, "y");

  std::vector<double> cpu_sum_dy(c), cpu_sum_dy_xhat(c), gpu_sum_dy(c), gpu_sum_dy_xhat(c);
  cpu_kernel.backward_local_sums(x.data(), dy.data(), mean.data(), inv_std.data(), cpu_sum_dy.data(),
                                 cpu_sum_dy_xhat.data());
  gpu_kernel.backward_local_sums(x.data(), dy.data(), mean.data(), inv_std.data(), gpu_sum_dy.data(),
                                 gpu_sum_dy_xhat.data());
  expect_matches_cpu(to_float(gpu_sum_dy), to_float(cpu_sum_dy), "sum_dy");
  expect_matches_cpu(to_float(gpu_sum_dy_xhat), to_float(cpu_sum_dy_xhat), "sum_dy_xhat");

  std::vector<float> cpu_dx(x.size()), gpu_dx(x.size());
  cpu_kernel.backward_data(x.data(), dy.data(), mean.data(), inv_std.data(), gamma.data(), cpu_sum_dy.data(),
                           cpu_sum_dy_xhat.data(), elements, cpu_dx.data());
  gpu_kernel.backward_data(x.data(), dy.data(), mean.data(), inv_std.data(), gamma.data(), cpu_sum_dy.data(),
                           cpu_sum_dy_xhat.data(), elements, gpu_dx.data());
  expect_matches_cpu(gpu_dx, cpu_dx, "dx");
}

}  // namespace
}  // namespace splitbrain::exec::cuda
