#include "exec/cpu/batchnorm.h"

#include <algorithm>
#include <cmath>

#include "exec/cpu/dnnl_check.h"

namespace splitbrain::exec::cpu {

namespace {

void check(const BatchNormShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.spatial <= 0)
    throw KernelArgumentError("batchnorm: batch, channels and spatial must be positive");
}

void check_count(double count) {
  if (!(count > 0)) throw KernelArgumentError("batchnorm: the element count per channel must be positive");
}

// Calls f(channel, pointer to that channel's `spatial` elements of sample n) for every block.
template <typename F>
void for_each_block(const BatchNormShape& s, F&& f) {
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c) f(c, (n * s.channels + c) * s.spatial);
}

}  // namespace

void batchnorm_local_sums(const BatchNormShape& s, const float* x, double* sum, double* sum_sq) {
  check(s);
  for (int64_t c = 0; c < s.channels; ++c) sum[c] = sum_sq[c] = 0.0;
  for_each_block(s, [&](int64_t c, int64_t offset) {
    double a = 0.0, b = 0.0;
    for (int64_t i = 0; i < s.spatial; ++i) {
      const double v = x[offset + i];
      a += v;
      b += v * v;
    }
    sum[c] += a;
    sum_sq[c] += b;
  });
}

void batchnorm_statistics(int64_t channels, const double* sum, const double* sum_sq, double count, double epsilon,
                          float* mean, float* inv_std) {
  check_count(count);
  for (int64_t c = 0; c < channels; ++c) {
    const double m = sum[c] / count;
    const double var = std::max(sum_sq[c] / count - m * m, 0.0);
    mean[c] = static_cast<float>(m);
    inv_std[c] = static_cast<float>(1.0 / std::sqrt(var + epsilon));
  }
}

void batchnorm_normalize(const BatchNormShape& s, const float* x, const float* mean, const float* inv_std,
                         const float* gamma, const float* beta, float* y) {
  check(s);
  for_each_block(s, [&](int64_t c, int64_t offset) {
    const float scale = inv_std[c] * gamma[c];
    const float shift = beta[c] - mean[c] * scale;
    for (int64_t i = 0; i < s.spatial; ++i) y[offset + i] = x[offset + i] * scale + shift;
  });
}

void batchnorm_backward_local_sums(const BatchNormShape& s, const float* x, const float* dy, const float* mean,
                                   const float* inv_std, double* sum_dy, double* sum_dy_xhat) {
  check(s);
  for (int64_t c = 0; c < s.channels; ++c) sum_dy[c] = sum_dy_xhat[c] = 0.0;
  for_each_block(s, [&](int64_t c, int64_t offset) {
    double a = 0.0, b = 0.0;
    for (int64_t i = 0; i < s.spatial; ++i) {
      const double g = dy[offset + i];
      a += g;
      b += g * (static_cast<double>(x[offset + i]) - mean[c]);
    }
    sum_dy[c] += a;
    sum_dy_xhat[c] += b * inv_std[c];
  });
}

void batchnorm_backward_data(const BatchNormShape& s, const float* x, const float* dy, const float* mean,
                             const float* inv_std, const float* gamma, const double* sum_dy,
                             const double* sum_dy_xhat, double count, float* dx) {
  check(s);
  check_count(count);
  for_each_block(s, [&](int64_t c, int64_t offset) {
    // dx = k * (dy - mean_dy - xhat * mean_dy_xhat), k = gamma * inv_std.
    const float k = gamma[c] * inv_std[c];
    const float mean_dy = static_cast<float>(sum_dy[c] / count);
    const float mean_dy_xhat = static_cast<float>(sum_dy_xhat[c] / count);
    for (int64_t i = 0; i < s.spatial; ++i) {
      const float xhat = (x[offset + i] - mean[c]) * inv_std[c];
      dx[offset + i] = k * (dy[offset + i] - mean_dy - xhat * mean_dy_xhat);
    }
  });
}

void batchnorm_parameter_gradients(int64_t channels, const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                   float* dbeta) {
  for (int64_t c = 0; c < channels; ++c) {
    dgamma[c] = static_cast<float>(sum_dy_xhat[c]);
    dbeta[c] = static_cast<float>(sum_dy[c]);
  }
}

void batchnorm_update_running(int64_t channels, const double* sum, const double* sum_sq, double count,
                              double momentum, float* running_mean, float* running_var) {
  check_count(count);
  for (int64_t c = 0; c < channels; ++c) {
    const double m = sum[c] / count;
    const double var = std::max(sum_sq[c] / count - m * m, 0.0);
    const double unbiased = count > 1 ? var * count / (count - 1) : var;
    running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * m);
    running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
  }
}

}  // namespace splitbrain::exec::cpu
