#include "exec/kernels/batchnorm_statistics.h"

#include <algorithm>
#include <cmath>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

void check_batchnorm_count(double count) {
  if (!(count > 0)) throw KernelArgumentError("batchnorm: the element count per channel must be positive");
}

void batchnorm_statistics(int64_t channels, const double* sum, const double* sum_sq, double count, double epsilon,
                          float* mean, float* inv_std) {
  check_batchnorm_count(count);
  for (int64_t c = 0; c < channels; ++c) {
    const ChannelStatistics channel = channel_statistics(sum[c], sum_sq[c], count, epsilon);
    mean[c] = channel.mean;
    inv_std[c] = channel.inv_std;
  }
}

void batchnorm_update_running(int64_t channels, const double* sum, const double* sum_sq, double count, double momentum,
                              float* running_mean, float* running_var) {
  check_batchnorm_count(count);
  for (int64_t c = 0; c < channels; ++c) {
    const double m = sum[c] / count;
    const double var = std::max(sum_sq[c] / count - m * m, 0.0);
    const double unbiased = count > 1 ? var * count / (count - 1) : var;
    running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * m);
    running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
  }
}

}  // namespace splitbrain::exec::kernels
