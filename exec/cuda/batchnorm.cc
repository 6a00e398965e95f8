#include "exec/cuda/batchnorm.h"

#include "exec/cuda/normalization_kernels.h"
#include "exec/kernels/batchnorm_statistics.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

ChannelLayout channel_layout(const kernels::BatchNormShape& s) { return {s.batch, s.channels, s.spatial}; }

}  // namespace

BatchNormKernel::BatchNormKernel(CudaContext& context, const kernels::BatchNormShape& shape)
    : context_(context), shape_(kernels::checked(shape)), layout_(channel_layout(shape_)) {}

void BatchNormKernel::local_sums(const float* x, double* sum, double* sum_sq) {
  batchnorm_sums(context_.stream(), layout_, x, sum, sum_sq);
}

void BatchNormKernel::statistics(const double* sum, const double* sum_sq, double count, double epsilon, float* mean,
                                 float* inv_std) {
  kernels::check_batchnorm_count(count);
  batchnorm_statistics(context_.stream(), layout_.channels, sum, sum_sq, count, epsilon, mean, inv_std);
}

void BatchNormKernel::normalize(const float* x, const float* mean, const float* inv_std, const float* gamma,
                                const float* beta, float* y) {
  batchnorm_apply(context_.stream(), layout_, x, mean, inv_std, gamma, beta, y);
}

void BatchNormKernel::backward_local_sums(const float* x, const float* dy, const float* mean, const float* inv_std,
                                          double* sum_dy, double* sum_dy_xhat) {
  batchnorm_gradient_sums(context_.stream(), layout_, x, dy, mean, inv_std, sum_dy, sum_dy_xhat);
}

void BatchNormKernel::add_parameter_gradients(const double* sum_dy, const double* sum_dy_xhat, float* dgamma,
                                              float* dbeta) {
  batchnorm_add_parameter_gradients(context_.stream(), layout_.channels, sum_dy, sum_dy_xhat, dgamma, dbeta);
}

void BatchNormKernel::backward_data(const float* x, const float* dy, const float* mean, const float* inv_std,
                                    const float* gamma, const double* sum_dy, const double* sum_dy_xhat, double count,
                                    float* dx) {
  kernels::check_batchnorm_count(count);
  batchnorm_input_gradient(context_.stream(), layout_, x, dy, mean, inv_std, gamma, sum_dy, sum_dy_xhat, count, dx);
}

std::unique_ptr<kernels::BatchNormKernel> make_batchnorm(CudaContext& context, const kernels::BatchNormShape& shape) {
  return std::make_unique<BatchNormKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
