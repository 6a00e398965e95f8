#include "exec/cuda/batchnorm.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/normalization_kernels.h"
#include "exec/kernels/batchnorm_statistics.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

ChannelLayout checked(const kernels::BatchNormShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.spatial <= 0)
    throw kernels::KernelArgumentError("batchnorm: batch, channels and spatial must be positive");
  return {s.batch, s.channels, s.spatial};
}

// The context's staging slots, one per per-channel argument (the tensors are used in place).
enum Slot : std::size_t { kMean, kInvStd, kFirstSum, kSecondSum };

template <typename T>
T* device_slot(CudaContext& context, Slot slot, int64_t count) {
  return static_cast<T*>(context.staging(slot, static_cast<std::size_t>(count) * sizeof(T)));
}

// Host or device values into a staging slot, queued on the stream.
template <typename T>
const T* staged(CudaContext& context, Slot slot, const T* values, int64_t count) {
  T* device = device_slot<T>(context, slot, count);
  SB_CUDA_CHECK(cudaMemcpyAsync(device, values, static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyDefault,
                                context.stream()));
  context.count_host_transfer(static_cast<std::size_t>(count) * sizeof(T));
  return device;
}

// Queued on the stream: the values are there only after the context synchronises.
template <typename T>
void fetch(CudaContext& context, const T* device, int64_t count, T* values) {
  SB_CUDA_CHECK(cudaMemcpyAsync(values, device, static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyDefault,
                                context.stream()));
  context.count_host_transfer(static_cast<std::size_t>(count) * sizeof(T));
}

}  // namespace

BatchNormKernel::BatchNormKernel(CudaContext& context, const kernels::BatchNormShape& shape)
    : context_(context), shape_(shape), layout_(checked(shape)) {}

void BatchNormKernel::local_sums(const float* x, double* sum, double* sum_sq) {
  const ChannelLayout& l = layout_;
  auto* device_sum = device_slot<double>(context_, kFirstSum, l.channels);
  auto* device_sum_sq = device_slot<double>(context_, kSecondSum, l.channels);
  batchnorm_sums(context_.stream(), l, x, device_sum, device_sum_sq);
  fetch(context_, device_sum, l.channels, sum);
  fetch(context_, device_sum_sq, l.channels, sum_sq);
  // The op all-reduces the sums on the host next.
  context_.synchronize();
}

void BatchNormKernel::normalize(const float* x, const float* mean, const float* inv_std, const float* gamma,
                                const float* beta, float* y) {
  const ChannelLayout& l = layout_;
  const float* device_mean = staged(context_, kMean, mean, l.channels);
  const float* device_inv_std = staged(context_, kInvStd, inv_std, l.channels);
  batchnorm_apply(context_.stream(), l, x, device_mean, device_inv_std, gamma, beta, y);
}

void BatchNormKernel::backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std,
                                          double* sum_dy, double* sum_dy_xhat) {
  const ChannelLayout& l = layout_;
  const float* device_mean = staged(context_, kMean, mean, l.channels);
  const float* device_inv_std = staged(context_, kInvStd, inv_std, l.channels);
  auto* device_sum_dy = device_slot<double>(context_, kFirstSum, l.channels);
  auto* device_sum_dy_xhat = device_slot<double>(context_, kSecondSum, l.channels);
  batchnorm_gradient_sums(context_.stream(), l, x, dy, device_mean, device_inv_std, device_sum_dy, device_sum_dy_xhat);
  fetch(context_, device_sum_dy, l.channels, sum_dy);
  fetch(context_, device_sum_dy_xhat, l.channels, sum_dy_xhat);
  // The op turns the sums into parameter gradients and all-reduces them on the host next.
  context_.synchronize();
}

void BatchNormKernel::backward_data(const float* x, const float* dy, const float* mean, const float* inv_std,
                                    const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double count,
                                    float* dx) {
  const ChannelLayout& l = layout_;
  kernels::check_batchnorm_count(count);
  const float* device_mean = staged(context_, kMean, mean, l.channels);
  const float* device_inv_std = staged(context_, kInvStd, inv_std, l.channels);
  const double* device_sum_dy = staged(context_, kFirstSum, sum_dy, l.channels);
  const double* device_sum_dy_xhat = staged(context_, kSecondSum, sum_dy_xhat, l.channels);
  batchnorm_input_gradient(context_.stream(), l, x, dy, device_mean, device_inv_std, gamma, device_sum_dy,
                           device_sum_dy_xhat, count, dx);
}

}  // namespace splitbrain::exec::cuda
