#include "exec/cpu/cpu_kernel_factory.h"

#include <utility>

#include "exec/cpu/adaptive_avgpool.h"
#include "exec/cpu/attention.h"
#include "exec/cpu/batched_matmul.h"
#include "exec/cpu/batchnorm.h"
#include "exec/cpu/concat.h"
#include "exec/cpu/conv2d.h"
#include "exec/cpu/dropout.h"
#include "exec/cpu/elementwise_add.h"
#include "exec/cpu/eltwise.h"
#include "exec/cpu/embedding.h"
#include "exec/cpu/layernorm.h"
#include "exec/cpu/linear.h"
#include "exec/cpu/pooling.h"
#include "exec/cpu/softmax_cross_entropy.h"

namespace splitbrain::exec::cpu {

CpuKernelFactory::CpuKernelFactory(int threads) : context_(threads) {}

std::unique_ptr<kernels::Conv2dKernel> CpuKernelFactory::make_conv2d(const kernels::Conv2dShape& shape) {
  return std::make_unique<Conv2dKernel>(context_, shape);
}

std::unique_ptr<kernels::LinearKernel> CpuKernelFactory::make_linear(const kernels::LinearShape& shape) {
  return std::make_unique<LinearKernel>(context_, shape);
}

std::unique_ptr<kernels::Pool2dKernel> CpuKernelFactory::make_pool2d(kernels::PoolKind kind,
                                                                     const kernels::Pool2dShape& shape) {
  return std::make_unique<Pool2dKernel>(context_, kind, shape);
}

std::unique_ptr<kernels::AdaptiveAvgPoolKernel> CpuKernelFactory::make_adaptive_avgpool(
    const kernels::AdaptiveAvgPoolShape& shape) {
  return std::make_unique<AdaptiveAvgPoolKernel>(shape);
}

std::unique_ptr<kernels::ActivationKernel> CpuKernelFactory::make_activation(kernels::Activation kind,
                                                                             int64_t elements) {
  return std::make_unique<ActivationKernel>(context_, kind, elements);
}

std::unique_ptr<kernels::AddKernel> CpuKernelFactory::make_add(int inputs, int64_t elements) {
  return std::make_unique<AddKernel>(context_, inputs, elements);
}

std::unique_ptr<kernels::ConcatKernel> CpuKernelFactory::make_concat(std::vector<kernels::Dims> input_dims, int axis) {
  return std::make_unique<ConcatKernel>(context_, std::move(input_dims), axis);
}

std::unique_ptr<kernels::BatchNormKernel> CpuKernelFactory::make_batchnorm(const kernels::BatchNormShape& shape) {
  return std::make_unique<BatchNormKernel>(shape);
}

std::unique_ptr<kernels::LayerNormKernel> CpuKernelFactory::make_layernorm(const kernels::LayerNormShape& shape) {
  return std::make_unique<LayerNormKernel>(context_, shape);
}

std::unique_ptr<kernels::DropoutKernel> CpuKernelFactory::make_dropout(double probability) {
  return std::make_unique<DropoutKernel>(probability);
}

std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> CpuKernelFactory::make_softmax_cross_entropy(
    const kernels::SoftmaxCrossEntropyShape& shape) {
  return std::make_unique<SoftmaxCrossEntropyKernel>(shape);
}

std::unique_ptr<kernels::EmbeddingKernel> CpuKernelFactory::make_embedding(const kernels::EmbeddingShape& shape) {
  return std::make_unique<EmbeddingKernel>(shape);
}

std::unique_ptr<kernels::BatchedMatmulKernel> CpuKernelFactory::make_batched_matmul(
    const kernels::BatchedMatmulShape& shape) {
  return std::make_unique<BatchedMatmulKernel>(context_, shape);
}

std::unique_ptr<kernels::SelfAttentionKernel> CpuKernelFactory::make_self_attention(
    const kernels::AttentionShape& shape) {
  return std::make_unique<SelfAttentionKernel>(context_, shape);
}

std::unique_ptr<kernels::ArrayKernel> CpuKernelFactory::make_array_kernel() {
  return kernels::make_host_array_kernel();
}
std::unique_ptr<kernels::KeptBuffer> CpuKernelFactory::make_kept_buffer(int64_t bytes) {
  return kernels::make_host_kept_buffer(bytes);
}

}  // namespace splitbrain::exec::cpu
