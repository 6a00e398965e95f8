// Batchnorm's four phases against a float64 whole-batch reference, and the property the runtime
// relies on: statistics and backward sums computed over two halves of the batch, then summed
// (what the all-reduce does), give the same result as over the whole.

#include "exec/cpu/batchnorm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "exec/kernels/batchnorm_statistics.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::batchnorm_update_running;
using kernels::BatchNormShape;
using testing::expect_close;
using testing::random_floats;

struct BnReference {
  std::vector<double> y, dx, dgamma, dbeta;
};

BnReference reference_batchnorm(const BatchNormShape& s, const std::vector<float>& x, const std::vector<float>& gamma,
                                const std::vector<float>& beta, const std::vector<float>& dy, double eps) {
  BnReference r;
  r.y.resize(x.size());
  r.dx.resize(x.size());
  r.dgamma.assign(gamma.size(), 0.0);
  r.dbeta.assign(gamma.size(), 0.0);
  const double m = static_cast<double>(s.count());
  auto at = [&](int64_t n, int64_t c, int64_t i) {
    return static_cast<std::size_t>((n * s.channels + c) * s.spatial + i);
  };
  for (int64_t c = 0; c < s.channels; ++c) {
    double mean = 0, var = 0;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) mean += x[at(n, c, i)] / m;
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) var += (x[at(n, c, i)] - mean) * (x[at(n, c, i)] - mean) / m;
    const double inv = 1 / std::sqrt(var + eps);
    const auto cc = static_cast<std::size_t>(c);
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) {
        const double xhat = (x[at(n, c, i)] - mean) * inv;
        r.y[at(n, c, i)] = xhat * gamma[cc] + beta[cc];
        r.dbeta[cc] += dy[at(n, c, i)];
        r.dgamma[cc] += dy[at(n, c, i)] * xhat;
      }
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t i = 0; i < s.spatial; ++i) {
        const double xhat = (x[at(n, c, i)] - mean) * inv;
        r.dx[at(n, c, i)] = gamma[cc] * inv * (dy[at(n, c, i)] - r.dbeta[cc] / m - xhat * r.dgamma[cc] / m);
      }
  }
  return r;
}

// Runs the four phases over `parts` equal batch slices, summing the per-slice sums as the
// all-reduce would.
void run_phases(const BatchNormShape& whole, int parts, const std::vector<float>& x, const std::vector<float>& gamma,
                const std::vector<float>& beta, const std::vector<float>& dy, double eps, std::vector<float>& y,
                std::vector<float>& dx, std::vector<float>& dgamma, std::vector<float>& dbeta) {
  const auto channels = static_cast<std::size_t>(whole.channels);
  BatchNormShape part = whole;
  part.batch = whole.batch / parts;
  BatchNormKernel kernel(part);
  const int64_t stride = part.batch * whole.channels * whole.spatial;
  std::vector<double> sum(channels, 0.0), sum_sq(channels, 0.0), local_a(channels), local_b(channels);
  for (int p = 0; p < parts; ++p) {
    kernel.local_sums(x.data() + p * stride, local_a.data(), local_b.data());
    for (std::size_t c = 0; c < channels; ++c) sum[c] += local_a[c], sum_sq[c] += local_b[c];
  }
  const auto count = static_cast<double>(whole.count());
  std::vector<float> mean(channels), inv_std(channels);
  kernel.statistics(sum.data(), sum_sq.data(), count, eps, mean.data(), inv_std.data());
  y.resize(x.size());
  for (int p = 0; p < parts; ++p)
    kernel.normalize(x.data() + p * stride, mean.data(), inv_std.data(), gamma.data(), beta.data(),
                     y.data() + p * stride);
  std::vector<double> sum_dy(channels, 0.0), sum_dy_xhat(channels, 0.0);
  for (int p = 0; p < parts; ++p) {
    kernel.backward_local_sums(x.data() + p * stride, dy.data() + p * stride, mean.data(), inv_std.data(),
                               local_a.data(), local_b.data());
    for (std::size_t c = 0; c < channels; ++c) sum_dy[c] += local_a[c], sum_dy_xhat[c] += local_b[c];
  }
  dx.resize(x.size());
  for (int p = 0; p < parts; ++p)
    kernel.backward_data(x.data() + p * stride, dy.data() + p * stride, mean.data(), inv_std.data(), gamma.data(),
                         sum_dy.data(), sum_dy_xhat.data(), count, dx.data() + p * stride);
  dgamma.assign(channels, 0.0f);
  dbeta.assign(channels, 0.0f);
  kernel.add_parameter_gradients(sum_dy.data(), sum_dy_xhat.data(), dgamma.data(), dbeta.data());
}

TEST(BatchNorm, WholeAndTwoHalvesMatchFloat64Reference) {
  const double eps = 1e-5;
  for (const BatchNormShape s : {BatchNormShape{4, 3, 35}, BatchNormShape{6, 5, 1}, BatchNormShape{2, 16, 9}}) {
    // An offset mean (3) makes sum_sq - sum^2/M cancel, as real activations do.
    const auto x = random_floats(static_cast<std::size_t>(s.batch * s.channels * s.spatial), 51, 2.0f, 4.0f);
    const auto dy = random_floats(x.size(), 52);
    const auto gamma = random_floats(static_cast<std::size_t>(s.channels), 53, 0.5f, 1.5f);
    const auto beta = random_floats(static_cast<std::size_t>(s.channels), 54);
    const BnReference ref = reference_batchnorm(s, x, gamma, beta, dy, eps);
    for (int parts : {1, 2}) {
      SCOPED_TRACE("parts " + std::to_string(parts) + ", channels " + std::to_string(s.channels));
      std::vector<float> y, dx, dgamma, dbeta;
      run_phases(s, parts, x, gamma, beta, dy, eps, y, dx, dgamma, dbeta);
      expect_close(y, ref.y, 1e-5, "y");
      expect_close(dx, ref.dx, 1e-4, "dx");  // dx is a difference of terms ~|dy|: relative to them
      expect_close(dgamma, ref.dgamma, 1e-5, "dgamma");
      expect_close(dbeta, ref.dbeta, 1e-5, "dbeta");
    }
  }
}

TEST(BatchNorm, ParameterGradientsAreAddedToWhatTheArraysHold) {
  BatchNormKernel kernel(BatchNormShape{1, 2, 1});
  const double sum_dy[2] = {1.0, -2.0}, sum_dy_xhat[2] = {0.5, 4.0};
  float dgamma[2] = {10.0f, 20.0f}, dbeta[2] = {30.0f, 40.0f};  // an earlier micro-batch's
  kernel.add_parameter_gradients(sum_dy, sum_dy_xhat, dgamma, dbeta);
  EXPECT_EQ(dgamma[0], 10.5f);
  EXPECT_EQ(dgamma[1], 24.0f);
  EXPECT_EQ(dbeta[0], 31.0f);
  EXPECT_EQ(dbeta[1], 38.0f);
}

TEST(BatchNorm, StatisticsRefuseAnEmptyCount) {
  BatchNormKernel kernel(BatchNormShape{1, 1, 1});
  const double sum[1] = {1.0}, sum_sq[1] = {1.0};
  float mean[1], inv_std[1];
  EXPECT_THROW(kernel.statistics(sum, sum_sq, 0.0, 1e-5, mean, inv_std), kernels::KernelArgumentError);
}

TEST(BatchNorm, RunningStatisticsUseUnbiasedVariance) {
  const double sum[1] = {6.0}, sum_sq[1] = {14.0};  // values 1, 2, 3: mean 2, biased var 2/3, unbiased 1
  float running_mean[1] = {0.0f}, running_var[1] = {1.0f};
  batchnorm_update_running(1, sum, sum_sq, 3.0, 0.1, running_mean, running_var);
  EXPECT_FLOAT_EQ(running_mean[0], 0.2f);  // 0.9 * 0 + 0.1 * 2
  EXPECT_FLOAT_EQ(running_var[0], 1.0f);   // 0.9 * 1 + 0.1 * 1
}

}  // namespace
}  // namespace splitbrain::exec::cpu
