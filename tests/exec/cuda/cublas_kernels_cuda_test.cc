// The cuBLAS kernels against their CPU twins: cuda::LinearKernel (forward, both backward passes,
// the accumulating weight gradient with and without a bias gradient) and
// cuda::BatchedMatmulKernel (every transpose combination, with alpha). The CUDA kernels get device
// copies of the CPU kernels' inputs (OnDevice).

#include "exec/cuda/linear.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/cpu/batched_matmul.h"
#include "exec/cpu/linear.h"
#include "exec/cuda/batched_matmul.h"
#include "exec/cuda/cuda_device.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::count;
using testing::expect_matches_cpu;
using testing::OnDevice;
using testing::random_floats;

struct Tensors {
  explicit Tensors(const kernels::LinearShape& s)
      : x(random_floats(count(s.rows * s.in_features), 11)),
        w(random_floats(count(s.out_features * s.in_features), 12)),
        b(random_floats(count(s.out_features), 13)),
        dy(random_floats(count(s.rows * s.out_features), 14)) {}
  std::vector<float> x, w, b, dy;
};

TEST(CudaLinear, ForwardAndBackwardMatchTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  for (const bool bias : {true, false}) {
    const kernels::LinearShape s{.rows = 7, .in_features = 13, .out_features = 5, .bias = bias};
    cpu::CpuContext cpu_context;
    CudaContext gpu_context(0);
    cpu::LinearKernel cpu_kernel(cpu_context, s);
    LinearKernel gpu_kernel(gpu_context, s);
    const Tensors t(s);

    const OnDevice<float> gpu_x(t.x), gpu_w(t.w), gpu_b(t.b), gpu_dy(t.dy);

    std::vector<float> cpu_y(t.dy.size());
    const OnDevice<float> gpu_y(t.dy.size());
    cpu_kernel.forward(t.x.data(), t.w.data(), t.b.data(), cpu_y.data());
    gpu_kernel.forward(gpu_x.get(), gpu_w.get(), gpu_b.get(), gpu_y.get());
    expect_matches_cpu(gpu_y.host(), cpu_y, "y");

    std::vector<float> cpu_dx(t.x.size());
    const OnDevice<float> gpu_dx(t.x.size());
    cpu_kernel.backward_data(t.dy.data(), t.w.data(), cpu_dx.data());
    gpu_kernel.backward_data(gpu_dy.get(), gpu_w.get(), gpu_dx.get());
    expect_matches_cpu(gpu_dx.host(), cpu_dx, "dx");

    std::vector<float> cpu_dw(t.w.size()), cpu_db(t.b.size());
    const OnDevice<float> gpu_dw(t.w.size()), gpu_db(t.b.size());
    cpu_kernel.backward_weights(t.x.data(), t.dy.data(), cpu_dw.data(), cpu_db.data());
    gpu_kernel.backward_weights(gpu_x.get(), gpu_dy.get(), gpu_dw.get(), gpu_db.get());
    expect_matches_cpu(gpu_dw.host(), cpu_dw, "dw");
    if (bias) expect_matches_cpu(gpu_db.host(), cpu_db, "db");
  }
}

TEST(CudaLinear, AccumulatesIntoTheGradients) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const kernels::LinearShape s{.rows = 9, .in_features = 6, .out_features = 4, .bias = true};
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  cpu::LinearKernel cpu_kernel(cpu_context, s);
  LinearKernel gpu_kernel(gpu_context, s);
  const Tensors t(s);
  const OnDevice<float> gpu_x(t.x), gpu_dy(t.dy);
  // Start from earlier micro-batches' gradients, not zeros, so beta = 1 is what is tested.
  auto cpu_dw = random_floats(t.w.size(), 15), cpu_db = random_floats(t.b.size(), 16);
  const OnDevice<float> gpu_dw(cpu_dw), gpu_db(cpu_db);
  cpu_kernel.accumulate_weight_gradients(t.x.data(), t.dy.data(), cpu_dw.data(), cpu_db.data());
  gpu_kernel.accumulate_weight_gradients(gpu_x.get(), gpu_dy.get(), gpu_dw.get(), gpu_db.get());
  expect_matches_cpu(gpu_dw.host(), cpu_dw, "dw");
  expect_matches_cpu(gpu_db.host(), cpu_db, "db");

  // Without db: the weights only.
  cpu_kernel.accumulate_weight_gradients(t.x.data(), t.dy.data(), cpu_dw.data(), nullptr);
  gpu_kernel.accumulate_weight_gradients(gpu_x.get(), gpu_dy.get(), gpu_dw.get(), nullptr);
  expect_matches_cpu(gpu_dw.host(), cpu_dw, "dw without db");
}

TEST(CudaBatchedMatmul, EveryTransposeMatchesTheCpu) {
  if (exec::cuda::visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  cpu::CpuContext cpu_context;
  CudaContext gpu_context(0);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const kernels::BatchedMatmulShape s{
          .batch = 3, .m = 5, .k = 7, .n = 4, .transpose_a = ta, .transpose_b = tb, .alpha = 0.5f};
      cpu::BatchedMatmulKernel cpu_kernel(cpu_context, s);
      BatchedMatmulKernel gpu_kernel(gpu_context, s);
      const auto a = random_floats(count(s.batch * s.m * s.k), 21);
      const auto b = random_floats(count(s.batch * s.k * s.n), 22);
      const OnDevice<float> gpu_a(a), gpu_b(b);
      std::vector<float> cpu_c(count(s.batch * s.m * s.n));
      const OnDevice<float> gpu_c(cpu_c.size());
      cpu_kernel.run(a.data(), b.data(), cpu_c.data());
      gpu_kernel.run(gpu_a.get(), gpu_b.get(), gpu_c.get());
      expect_matches_cpu(gpu_c.host(), cpu_c,
                         "c (transpose_a " + std::to_string(ta) + ", transpose_b " + std::to_string(tb) + ")");
    }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
