#pragma once
// Training-mode batch normalisation over NCHW (or [N, F] with spatial = 1), split into phases so
// the op can all-reduce the per-channel statistics across the ranks that split the batch or the
// image between them (SyncBatchNorm):
//
//   1. local_sums                      per-channel sum and sum of squares of the local x
//      -- op: all-reduce sum, sum_sq (and the element count) over the splitting axes --
//      statistics                      global mean and 1/sqrt(var + eps)
//   2. normalize                       y = (x - mean) * inv_std * gamma + beta
//   3. backward_local_sums             per-channel sums of dy and dy * xhat
//      add_parameter_gradients         dgamma += sum_dy_xhat, dbeta += sum_dy (this rank's share)
//      -- op: all-reduce both sums --
//   4. backward_data                   dx = gamma * inv_std / M * (M dy - sum_dy - xhat sum_dy_xhat)
//
// Every pointer is the backend's memory, the sums and statistics too (a GPU's: the step never
// waits for them on the host unless the op all-reduces them over ranks). The arithmetic on the
// per-channel sums is shared by every backend (batchnorm_statistics.h). Sums are in double:
// sum_sq - sum^2/M cancels, and the counts reach millions of elements.

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
  // mean[c] and inv_std[c] from the (all-reduced) sums over `count` elements per channel
  // (kernels::channel_statistics). Throws KernelArgumentError unless count > 0.
  virtual void statistics(const double* sum, const double* sum_sq, double count, double epsilon, float* mean,
                          float* inv_std) = 0;
  // Phase 2: y = (x - mean) * inv_std * gamma + beta, per channel. x == y is allowed.
  virtual void normalize(const float* x, const float* mean, const float* inv_std, const float* gamma, const float* beta,
                         float* y) = 0;
  // Phase 3: sum_dy[c] and sum_dy_xhat[c] over the local tensor (overwritten), xhat = (x-mean)*inv_std.
  virtual void backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std,
                                   double* sum_dy, double* sum_dy_xhat) = 0;
  // dgamma[c] += float(sum_dy_xhat[c]), dbeta[c] += float(sum_dy[c]): given the LOCAL sums, this
  // rank's share of the parameter gradients (the gradient buckets sum the ranks).
  virtual void add_parameter_gradients(const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                       float* dbeta) = 0;
  // Phase 4: dx from the (all-reduced) sums over `count` elements per channel. dx == dy is allowed.
  virtual void backward_data(const float* x, const float* dy, const float* mean, const float* inv_std,
                             const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double count,
                             float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
