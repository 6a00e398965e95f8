#include "exec/cuda/batchnorm.h"

#include "exec/cpu/dnnl_check.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/normalization_kernels.h"

namespace splitbrain::exec::cuda {

namespace {

ChannelLayout checked(const BatchNormShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.spatial <= 0)
    throw cpu::KernelArgumentError("batchnorm: batch, channels and spatial must be positive");
  return {s.batch, s.channels, s.spatial};
}

// The context's staging slots, one per argument.
enum Slot : std::size_t { kX, kDy, kMean, kInvStd, kGamma, kBeta, kFirstSum, kSecondSum, kOutput };

template <typename T>
T* device_slot(CudaContext& context, Slot slot, int64_t count) {
  return static_cast<T*>(context.staging(slot, static_cast<std::size_t>(count) * sizeof(T)));
}

template <typename T>
const T* staged(CudaContext& context, Slot slot, const T* host, int64_t count) {
  T* device = device_slot<T>(context, slot, count);
  SB_CUDA_CHECK(cudaMemcpyAsync(device, host, static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyHostToDevice,
                                context.stream()));
  return device;
}

template <typename T>
void fetch(CudaContext& context, const T* device, int64_t count, T* host) {
  SB_CUDA_CHECK(cudaMemcpyAsync(host, device, static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyDeviceToHost,
                                context.stream()));
}

int64_t elements(const ChannelLayout& l) { return l.batch * l.channels * l.spatial; }

}  // namespace

void batchnorm_local_sums(CudaContext& context, const BatchNormShape& shape, const float* x, double* sum,
                          double* sum_sq) {
  const ChannelLayout l = checked(shape);
  const float* device_x = staged(context, kX, x, elements(l));
  auto* device_sum = device_slot<double>(context, kFirstSum, l.channels);
  auto* device_sum_sq = device_slot<double>(context, kSecondSum, l.channels);
  batchnorm_sums(context.stream(), l, device_x, device_sum, device_sum_sq);
  fetch(context, device_sum, l.channels, sum);
  fetch(context, device_sum_sq, l.channels, sum_sq);
  context.synchronize();
}

void batchnorm_normalize(CudaContext& context, const BatchNormShape& shape, const float* x, const float* mean,
                         const float* inv_std, const float* gamma, const float* beta, float* y) {
  const ChannelLayout l = checked(shape);
  const float* device_x = staged(context, kX, x, elements(l));
  const float* device_mean = staged(context, kMean, mean, l.channels);
  const float* device_inv_std = staged(context, kInvStd, inv_std, l.channels);
  const float* device_gamma = staged(context, kGamma, gamma, l.channels);
  const float* device_beta = staged(context, kBeta, beta, l.channels);
  auto* device_y = device_slot<float>(context, kOutput, elements(l));
  batchnorm_apply(context.stream(), l, device_x, device_mean, device_inv_std, device_gamma, device_beta, device_y);
  fetch(context, device_y, elements(l), y);
  context.synchronize();
}

void batchnorm_backward_local_sums(CudaContext& context, const BatchNormShape& shape, const float* x, const float* dy,
                                   const float* mean, const float* inv_std, double* sum_dy, double* sum_dy_xhat) {
  const ChannelLayout l = checked(shape);
  const float* device_x = staged(context, kX, x, elements(l));
  const float* device_dy = staged(context, kDy, dy, elements(l));
  const float* device_mean = staged(context, kMean, mean, l.channels);
  const float* device_inv_std = staged(context, kInvStd, inv_std, l.channels);
  auto* device_sum_dy = device_slot<double>(context, kFirstSum, l.channels);
  auto* device_sum_dy_xhat = device_slot<double>(context, kSecondSum, l.channels);
  batchnorm_gradient_sums(context.stream(), l, device_x, device_dy, device_mean, device_inv_std, device_sum_dy,
                          device_sum_dy_xhat);
  fetch(context, device_sum_dy, l.channels, sum_dy);
  fetch(context, device_sum_dy_xhat, l.channels, sum_dy_xhat);
  context.synchronize();
}

void batchnorm_backward_data(CudaContext& context, const BatchNormShape& shape, const float* x, const float* dy,
                             const float* mean, const float* inv_std, const float* gamma, const double* sum_dy,
                             const double* sum_dy_xhat, double count, float* dx) {
  const ChannelLayout l = checked(shape);
  if (!(count > 0)) throw cpu::KernelArgumentError("batchnorm: the element count per channel must be positive");
  const float* device_x = staged(context, kX, x, elements(l));
  const float* device_dy = staged(context, kDy, dy, elements(l));
  const float* device_mean = staged(context, kMean, mean, l.channels);
  const float* device_inv_std = staged(context, kInvStd, inv_std, l.channels);
  const float* device_gamma = staged(context, kGamma, gamma, l.channels);
  const double* device_sum_dy = staged(context, kFirstSum, sum_dy, l.channels);
  const double* device_sum_dy_xhat = staged(context, kSecondSum, sum_dy_xhat, l.channels);
  auto* device_dx = device_slot<float>(context, kOutput, elements(l));
  batchnorm_input_gradient(context.stream(), l, device_x, device_dy, device_mean, device_inv_std, device_gamma,
                           device_sum_dy, device_sum_dy_xhat, count, device_dx);
  fetch(context, device_dx, elements(l), dx);
  context.synchronize();
}

}  // namespace splitbrain::exec::cuda
