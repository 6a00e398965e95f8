#pragma once
// Batchnorm's arithmetic on per-channel sums (see batchnorm.h): a few values per channel between
// the all-reduces, the same for every backend, so it is written once here: the per-channel
// functions compile for the host and, in the CUDA backend's kernels, for the GPU
// (host_device_function.h). C++17, for the .cu files.

#include <cmath>
#include <cstdint>

#include "exec/kernels/host_device_function.h"

namespace splitbrain::exec::kernels {

// One channel's mean and 1/sqrt(biased var + epsilon) from its sums over `count` elements.
struct ChannelStatistics {
  float mean;
  float inv_std;
};
SB_HOST_DEVICE inline ChannelStatistics channel_statistics(double sum, double sum_sq, double count, double epsilon) {
  const double m = sum / count;
#if defined(__CUDA_ARCH__)
  const double square = __dmul_rn(m, m);  // not fused into the subtraction: as the host rounds
#else
  const double square = m * m;
#endif
  const double spread = sum_sq / count - square;
  const double var = spread < 0.0 ? 0.0 : spread;  // rounding can leave a tiny negative
  return {static_cast<float>(m), static_cast<float>(1.0 / sqrt(var + epsilon))};
}

// From (all-reduced) sums over `count` elements per channel: mean[c] and inv_std[c] =
// 1/sqrt(biased var + epsilon). Both are kept for backward.
void batchnorm_statistics(int64_t channels, const double* sum, const double* sum_sq, double count, double epsilon,
                          float* mean, float* inv_std);

// PyTorch's running statistics: r = (1 - momentum) r + momentum * stat, with the unbiased
// variance var * count / (count - 1). Used only by evaluation.
void batchnorm_update_running(int64_t channels, const double* sum, const double* sum_sq, double count, double momentum,
                              float* running_mean, float* running_var);

// Throws KernelArgumentError unless count > 0 (a phase given no elements per channel).
void check_batchnorm_count(double count);

}  // namespace splitbrain::exec::kernels
