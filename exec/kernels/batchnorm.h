#pragma once
// Training-mode batch normalisation over NCHW (or [N, F] with spatial = 1), split into phases so
// the op can all-reduce the per-channel statistics across the ranks that split the batch or the
// image between them (SyncBatchNorm):
//
//   1. local_sums                      per-channel sum and sum of squares of the local x
//      -- op: all-reduce sum, sum_sq (and the element count) over the splitting axes --
//      batchnorm_statistics            global mean and 1/sqrt(var + eps) (batchnorm_statistics.h)
//   2. normalize                       y = (x - mean) * inv_std * gamma + beta
//   3. backward_local_sums             per-channel sums of dy and dy * xhat
//      -- op: all-reduce both sums --
//   4. backward_data                   dx = gamma * inv_std / M * (M dy - sum_dy - xhat sum_dy_xhat)
//
// The phases that read the tensors are the kernel; the arithmetic on the per-channel sums
// between them is shared by every backend. Sums are in double: sum_sq - sum^2/M cancels, and
// the counts reach millions of elements.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct BatchNormShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t spatial = 1;  // H * W of the local tensor; 1 for [N, F]

  int64_t count() const { return batch * spatial; }  // local elements per channel
};

class BatchNormKernel {
 public:
  virtual ~BatchNormKernel() = default;
  virtual const BatchNormShape& shape() const = 0;

  // Phase 1: sum[c] and sum_sq[c] over the local tensor (overwritten).
  virtual void local_sums(const float* x, double* sum, double* sum_sq) = 0;
  // Phase 2: y = (x - mean) * inv_std * gamma + beta, per channel. x == y is allowed.
  virtual void normalize(const float* x, const float* mean, const float* inv_std, const float* gamma, const float* beta,
                         float* y) = 0;
  // Phase 3: sum_dy[c] and sum_dy_xhat[c] over the local tensor (overwritten), xhat = (x-mean)*inv_std.
  virtual void backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std,
                                   double* sum_dy, double* sum_dy_xhat) = 0;
  // Phase 4: dx from the (all-reduced) sums over `count` elements per channel. dx == dy is allowed.
  virtual void backward_data(const float* x, const float* dy, const float* mean, const float* inv_std,
                             const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double count,
                             float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
