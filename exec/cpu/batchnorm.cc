#include "exec/cpu/batchnorm.h"

#include "exec/kernels/batchnorm_statistics.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

namespace {

// Calls f(channel, pointer to that channel's `spatial` elements of sample n) for every block.
template <typename F>
void for_each_block(const kernels::BatchNormShape& s, F&& f) {
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c) f(c, (n * s.channels + c) * s.spatial);
}

}  // namespace

BatchNormKernel::BatchNormKernel(const kernels::BatchNormShape& shape) : shape_(kernels::checked(shape)) {}

void BatchNormKernel::local_sums(const float* x, double* sum, double* sum_sq) {
  const auto& s = shape_;
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

void BatchNormKernel::statistics(const double* sum, const double* sum_sq, double count, double epsilon, float* mean,
                                 float* inv_std) {
  kernels::batchnorm_statistics(shape_.channels, sum, sum_sq, count, epsilon, mean, inv_std);
}

void BatchNormKernel::normalize(const float* x, const float* mean, const float* inv_std, const float* gamma,
                                const float* beta, float* y) {
  const auto& s = shape_;
  for_each_block(s, [&](int64_t c, int64_t offset) {
    const float scale = inv_std[c] * gamma[c];
    const float shift = beta[c] - mean[c] * scale;
    for (int64_t i = 0; i < s.spatial; ++i) y[offset + i] = x[offset + i] * scale + shift;
  });
}

void BatchNormKernel::backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std,
                                          double* sum_dy, double* sum_dy_xhat) {
  const auto& s = shape_;
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

void BatchNormKernel::add_parameter_gradients(const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                              float* dbeta) {
  for (int64_t c = 0; c < shape_.channels; ++c) {
    dgamma[c] += static_cast<float>(sum_dy_xhat[c]);
    dbeta[c] += static_cast<float>(sum_dy[c]);
  }
}

void BatchNormKernel::backward_data(const float* x, const float* dy, const float* mean, const float* inv_std,
                                    const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double count,
                                    float* dx) {
  const auto& s = shape_;
  kernels::check_batchnorm_count(count);
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

std::unique_ptr<kernels::BatchNormKernel> make_batchnorm(CpuContext& /*context*/,
                                                         const kernels::BatchNormShape& shape) {
  return std::make_unique<BatchNormKernel>(shape);
}

}  // namespace splitbrain::exec::cpu
