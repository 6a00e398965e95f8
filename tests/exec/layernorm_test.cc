// LayerNormKernel against float64 loops: y, saved mean/variance, dx, dgamma, dbeta.

#include "exec/cpu/layernorm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::LayerNormShape;
using testing::expect_close;
using testing::random_floats;

TEST(LayerNorm, MatchesFloat64Reference) {
  for (const LayerNormShape s :
       {LayerNormShape{6, 32, 1e-5}, LayerNormShape{7, 13, 1e-5}, LayerNormShape{1, 1, 1e-3}}) {
    SCOPED_TRACE("rows " + std::to_string(s.rows) + " features " + std::to_string(s.features));
    const auto rows = static_cast<std::size_t>(s.rows), d = static_cast<std::size_t>(s.features);
    const auto x = random_floats(rows * d, 61, -2.0f, 3.0f), dy = random_floats(rows * d, 62);
    const auto gamma = random_floats(d, 63, 0.5f, 1.5f), beta = random_floats(d, 64);
    std::vector<double> y_ref(rows * d), dx_ref(rows * d), dg_ref(d, 0.0), db_ref(d, 0.0), mean_ref(rows),
        var_ref(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < d; ++j) mean += x[r * d + j] / static_cast<double>(d);
      for (std::size_t j = 0; j < d; ++j) var += (x[r * d + j] - mean) * (x[r * d + j] - mean) / static_cast<double>(d);
      const double inv = 1 / std::sqrt(var + s.epsilon);
      mean_ref[r] = mean, var_ref[r] = var;
      double sum_g = 0, sum_g_xhat = 0;  // g = dy * gamma, the gradient of xhat
      for (std::size_t j = 0; j < d; ++j) {
        const double xhat = (x[r * d + j] - mean) * inv, g = static_cast<double>(dy[r * d + j]) * gamma[j];
        y_ref[r * d + j] = xhat * gamma[j] + beta[j];
        dg_ref[j] += dy[r * d + j] * xhat;
        db_ref[j] += dy[r * d + j];
        sum_g += g, sum_g_xhat += g * xhat;
      }
      for (std::size_t j = 0; j < d; ++j) {
        const double xhat = (x[r * d + j] - mean) * inv, g = static_cast<double>(dy[r * d + j]) * gamma[j];
        dx_ref[r * d + j] = inv * (g - sum_g / static_cast<double>(d) - xhat * sum_g_xhat / static_cast<double>(d));
      }
    }
    CpuContext context;
    LayerNormKernel kernel(context, s);
    std::vector<float> y(rows * d), mean(rows), var(rows), dx(rows * d), dgamma(d), dbeta(d);
    kernel.forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), var.data());
    kernel.backward(x.data(), dy.data(), gamma.data(), mean.data(), var.data(), dx.data(), dgamma.data(), dbeta.data());
    expect_close(y, y_ref, 1e-5, "y");
    expect_close(mean, mean_ref, 1e-5, "mean");
    expect_close(var, var_ref, 1e-5, "variance");
    expect_close(dx, dx_ref, 1e-4, "dx");
    expect_close(dgamma, dg_ref, 1e-5, "dgamma");
    expect_close(dbeta, db_ref, 1e-5, "dbeta");
    // A second micro-batch's parameter gradients add to the first's; without dx, none is written.
    kernel.backward(x.data(), dy.data(), gamma.data(), mean.data(), var.data(), nullptr, dgamma.data(), dbeta.data());
    for (auto& v : dg_ref) v *= 2;
    for (auto& v : db_ref) v *= 2;
    expect_close(dgamma, dg_ref, 1e-5, "dgamma accumulated");
    expect_close(dbeta, db_ref, 1e-5, "dbeta accumulated");
  }
}

}  // namespace
}  // namespace splitbrain::exec::cpu
