#pragma once
// The CUDA backend's kernels: cuDNN, cuBLAS and own kernels, all on the one CudaContext (device,
// stream, handles, staging) this factory shares with them, so the context lives as long as the
// factory and the factory outlives every kernel it makes (kernels::KernelFactory's rule).

#include <memory>
#include <vector>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/kernel_factory.h"

namespace splitbrain::exec::cuda {

class CudaKernelFactory final : public kernels::KernelFactory {
 public:
  explicit CudaKernelFactory(std::shared_ptr<CudaContext> context);

  std::unique_ptr<kernels::Conv2dKernel> make_conv2d(const kernels::Conv2dShape& shape) override;
  std::unique_ptr<kernels::LinearKernel> make_linear(const kernels::LinearShape& shape) override;
  std::unique_ptr<kernels::Pool2dKernel> make_pool2d(kernels::PoolKind kind,
                                                     const kernels::Pool2dShape& shape) override;
  std::unique_ptr<kernels::AdaptiveAvgPoolKernel> make_adaptive_avgpool(
      const kernels::AdaptiveAvgPoolShape& shape) override;
  std::unique_ptr<kernels::ActivationKernel> make_activation(kernels::Activation kind, int64_t elements) override;
  std::unique_ptr<kernels::AddKernel> make_add(int inputs, int64_t elements) override;
  std::unique_ptr<kernels::ConcatKernel> make_concat(std::vector<kernels::Dims> input_dims, int axis) override;
  std::unique_ptr<kernels::BatchNormKernel> make_batchnorm(const kernels::BatchNormShape& shape) override;
  std::unique_ptr<kernels::LayerNormKernel> make_layernorm(const kernels::LayerNormShape& shape) override;
  std::unique_ptr<kernels::DropoutKernel> make_dropout(double probability) override;
  std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(
      const kernels::SoftmaxCrossEntropyShape& shape) override;
  std::unique_ptr<kernels::EmbeddingKernel> make_embedding(const kernels::EmbeddingShape& shape) override;
  std::unique_ptr<kernels::BatchedMatmulKernel> make_batched_matmul(const kernels::BatchedMatmulShape& shape) override;
  std::unique_ptr<kernels::SelfAttentionKernel> make_self_attention(const kernels::AttentionShape& shape) override;
  std::unique_ptr<kernels::ArrayKernel> make_array_kernel() override;
  std::unique_ptr<kernels::KeptBuffer> make_kept_buffer(int64_t bytes) override;

 private:
  std::shared_ptr<CudaContext> context_;
};

}  // namespace splitbrain::exec::cuda
