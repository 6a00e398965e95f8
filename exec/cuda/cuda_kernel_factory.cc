#include "exec/cuda/cuda_kernel_factory.h"

#include <stdexcept>

#include "exec/cuda/adaptive_avgpool.h"
#include "exec/cuda/array_kernel.h"
#include "exec/cuda/attention.h"
#include "exec/cuda/batched_matmul.h"
#include "exec/cuda/batchnorm.h"
#include "exec/cuda/concat.h"
#include "exec/cuda/conv2d.h"
#include "exec/cuda/dropout.h"
#include "exec/cuda/elementwise_add.h"
#include "exec/cuda/eltwise.h"
#include "exec/cuda/embedding.h"
#include "exec/cuda/layernorm.h"
#include "exec/cuda/linear.h"
#include "exec/cuda/pooled_block.h"
#include "exec/cuda/pooling.h"
#include "exec/cuda/softmax_cross_entropy.h"

namespace splitbrain::exec::cuda {

CudaKernelFactory::CudaKernelFactory(std::shared_ptr<CudaContext> context) : context_(std::move(context)) {
  if (context_ == nullptr) throw std::invalid_argument("CudaKernelFactory: no CudaContext");
}

std::unique_ptr<kernels::Conv2dKernel> CudaKernelFactory::make_conv2d(const kernels::Conv2dShape& shape) {
  return std::make_unique<Conv2dKernel>(*context_, shape);
}

std::unique_ptr<kernels::LinearKernel> CudaKernelFactory::make_linear(const kernels::LinearShape& shape) {
  return std::make_unique<LinearKernel>(*context_, shape);
}

std::unique_ptr<kernels::Pool2dKernel> CudaKernelFactory::make_pool2d(kernels::PoolKind kind,
                                                                      const kernels::Pool2dShape& shape) {
  return std::make_unique<Pool2dKernel>(*context_, kind, shape);
}

std::unique_ptr<kernels::AdaptiveAvgPoolKernel> CudaKernelFactory::make_adaptive_avgpool(
    const kernels::AdaptiveAvgPoolShape& shape) {
  return std::make_unique<AdaptiveAvgPoolKernel>(*context_, shape);
}

std::unique_ptr<kernels::ActivationKernel> CudaKernelFactory::make_activation(kernels::Activation kind,
                                                                              int64_t elements) {
  return std::make_unique<ActivationKernel>(*context_, kind, elements);
}

std::unique_ptr<kernels::AddKernel> CudaKernelFactory::make_add(int inputs, int64_t elements) {
  return std::make_unique<AddKernel>(*context_, inputs, elements);
}

std::unique_ptr<kernels::ConcatKernel> CudaKernelFactory::make_concat(std::vector<kernels::Dims> input_dims, int axis) {
  return std::make_unique<ConcatKernel>(*context_, std::move(input_dims), axis);
}

std::unique_ptr<kernels::BatchNormKernel> CudaKernelFactory::make_batchnorm(const kernels::BatchNormShape& shape) {
  return std::make_unique<BatchNormKernel>(*context_, shape);
}

std::unique_ptr<kernels::LayerNormKernel> CudaKernelFactory::make_layernorm(const kernels::LayerNormShape& shape) {
  return std::make_unique<LayerNormKernel>(*context_, shape);
}

std::unique_ptr<kernels::DropoutKernel> CudaKernelFactory::make_dropout(double probability) {
  return std::make_unique<DropoutKernel>(*context_, probability);
}

std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> CudaKernelFactory::make_softmax_cross_entropy(
    const kernels::SoftmaxCrossEntropyShape& shape) {
  return std::make_unique<SoftmaxCrossEntropyKernel>(*context_, shape);
}

std::unique_ptr<kernels::EmbeddingKernel> CudaKernelFactory::make_embedding(const kernels::EmbeddingShape& shape) {
  return std::make_unique<EmbeddingKernel>(*context_, shape);
}

std::unique_ptr<kernels::BatchedMatmulKernel> CudaKernelFactory::make_batched_matmul(
    const kernels::BatchedMatmulShape& shape) {
  return std::make_unique<BatchedMatmulKernel>(*context_, shape);
}

std::unique_ptr<kernels::SelfAttentionKernel> CudaKernelFactory::make_self_attention(
    const kernels::AttentionShape& shape) {
  return std::make_unique<SelfAttentionKernel>(*context_, shape);
}

// Host memory until this backend's arrays live on the device (README.md).
std::unique_ptr<kernels::ArrayKernel> CudaKernelFactory::make_array_kernel() {
  return std::make_unique<ArrayKernel>(*context_);
}
namespace {

// Kept state in the rank's device memory, from the context's pool.
class DeviceKeptBuffer final : public kernels::KeptBuffer {
 public:
  DeviceKeptBuffer(const std::shared_ptr<DeviceMemoryPool>& pool, int64_t bytes)
      : block_(pool, static_cast<std::size_t>(bytes)) {}
  std::byte* data() override { return static_cast<std::byte*>(block_.data()); }
  int64_t bytes() const override { return static_cast<int64_t>(block_.bytes()); }

 private:
  PooledBlock block_;
};

}  // namespace

std::unique_ptr<kernels::KeptBuffer> CudaKernelFactory::make_kept_buffer(int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("CudaKernelFactory::make_kept_buffer: negative size");
  return std::make_unique<DeviceKeptBuffer>(context_->memory(), bytes);
}

}  // namespace splitbrain::exec::cuda
