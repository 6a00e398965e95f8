#pragma once
// Batchnorm's arithmetic on per-channel sums (see batchnorm.h): a few floats per channel on the
// host between the all-reduces, the same for every backend, so it is written once here.

#include <cstdint>

namespace splitbrain::exec::kernels {

// From (all-reduced) sums over `count` elements per channel: mean[c] and inv_std[c] =
// 1/sqrt(biased var + epsilon). Both are kept for backward.
void batchnorm_statistics(int64_t channels, const double* sum, const double* sum_sq, double count, double epsilon,
                          float* mean, float* inv_std);

// dgamma = sum_dy_xhat, dbeta = sum_dy. Given the LOCAL sums these are this rank's share of the
// gradient (the ordinary gradient sync then sums them); given the all-reduced sums they are
// already the full gradient and must not be synchronised again.
void batchnorm_parameter_gradients(int64_t channels, const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                   float* dbeta);

// PyTorch's running statistics: r = (1 - momentum) r + momentum * stat, with the unbiased
// variance var * count / (count - 1). Used only by evaluation.
void batchnorm_update_running(int64_t channels, const double* sum, const double* sum_sq, double count, double momentum,
                              float* running_mean, float* running_var);

// Throws KernelArgumentError unless count > 0 (a phase given no elements per channel).
void check_batchnorm_count(double count);

}  // namespace splitbrain::exec::kernels
