#pragma once
// Training-mode batch normalisation over NCHW (or [N, F] with spatial = 1), split into phases so
// the runtime can all-reduce the per-channel statistics across the ranks that split the batch or
// the image between them (SyncBatchNorm):
//
//   1. batchnorm_local_sums            per-channel sum and sum of squares of the local x
//      -- runtime: all-reduce sum, sum_sq (and the element count) over the splitting axes --
//      batchnorm_statistics            global mean and 1/sqrt(var + eps) (biased variance)
//   2. batchnorm_normalize             y = (x - mean) * inv_std * gamma + beta
//   3. batchnorm_backward_local_sums   per-channel sums of dy and dy * xhat
//      -- runtime: all-reduce both sums --
//   4. batchnorm_backward_data         dx = gamma * inv_std / M * (M dy - sum_dy - xhat sum_dy_xhat)
//
// Own code, not oneDNN's batch_normalization: its backward computes the sums of dy and dy*xhat
// over the local tensor inside the primitive, with no way to substitute the global sums, so a
// split batch would get a wrong dx. All four phases are single bandwidth-bound passes.
// Sums are kept in double: sum_sq - sum^2/M cancels, and the counts reach millions of elements.

#include <cstdint>

namespace splitbrain::exec::cpu {

struct BatchNormShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t spatial = 1;  // H * W of the local tensor; 1 for [N, F]

  int64_t count() const { return batch * spatial; }  // local elements per channel
};

// Phase 1: sum[c] and sum_sq[c] over the local tensor (overwritten).
void batchnorm_local_sums(const BatchNormShape& shape, const float* x, double* sum, double* sum_sq);

// From (all-reduced) sums over `count` elements per channel: mean[c] and inv_std[c] =
// 1/sqrt(biased var + epsilon). Both are kept for backward.
void batchnorm_statistics(int64_t channels, const double* sum, const double* sum_sq, double count, double epsilon,
                          float* mean, float* inv_std);

// Phase 2: y = (x - mean) * inv_std * gamma + beta, per channel. x == y is allowed.
void batchnorm_normalize(const BatchNormShape& shape, const float* x, const float* mean, const float* inv_std,
                         const float* gamma, const float* beta, float* y);

// Phase 3: sum_dy[c] and sum_dy_xhat[c] over the local tensor (overwritten), xhat = (x-mean)*inv_std.
void batchnorm_backward_local_sums(const BatchNormShape& shape, const float* x, const float* dy, const float* mean,
                                   const float* inv_std, double* sum_dy, double* sum_dy_xhat);

// Phase 4: dx from the (all-reduced) sums over `count` elements per channel. dx == dy is allowed.
void batchnorm_backward_data(const BatchNormShape& shape, const float* x, const float* dy, const float* mean,
                             const float* inv_std, const float* gamma, const double* sum_dy,
                             const double* sum_dy_xhat, double count, float* dx);

// dgamma = sum_dy_xhat, dbeta = sum_dy. Given the LOCAL sums these are this rank's share of the
// gradient (the ordinary gradient sync then sums them); given the all-reduced sums they are
// already the full gradient and must not be synchronised again.
void batchnorm_parameter_gradients(int64_t channels, const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                   float* dbeta);

// PyTorch's running statistics: r = (1 - momentum) r + momentum * stat, with the unbiased
// variance var * count / (count - 1). Used only by evaluation.
void batchnorm_update_running(int64_t channels, const double* sum, const double* sum_sq, double count,
                              double momentum, float* running_mean, float* running_var);

}  // namespace splitbrain::exec::cpu
