#pragma once
// What a backend provides to the shared ops (exec/ops): one kernel per layer, built once for the
// layer's local shapes. The ops hold the orchestration (halo exchange, partial-sum bias,
// gradient accumulation, loss scaling, statistics all-reduce, ...) and call only these, so a
// backend is a KernelFactory plus its collectives; only kernels differ between backends.
// Kernels take and give fp32 buffers in the backend's memory (host memory for both backends
// today); a factory's kernels may share state (an engine, a stream), so the factory must outlive
// every kernel it made.

#include <memory>
#include <vector>

#include "exec/kernels/adaptive_avgpool.h"
#include "exec/kernels/array_kernel.h"
#include "exec/kernels/attention.h"
#include "exec/kernels/batched_matmul.h"
#include "exec/kernels/batchnorm.h"
#include "exec/kernels/concat.h"
#include "exec/kernels/conv2d.h"
#include "exec/kernels/dropout.h"
#include "exec/kernels/elementwise_add.h"
#include "exec/kernels/eltwise.h"
#include "exec/kernels/kept_buffer.h"
#include "exec/kernels/embedding.h"
#include "exec/kernels/layernorm.h"
#include "exec/kernels/linear.h"
#include "exec/kernels/pooling.h"
#include "exec/kernels/softmax_cross_entropy.h"

namespace splitbrain::exec::kernels {

class KernelFactory {
 public:
  virtual ~KernelFactory() = default;

  virtual std::unique_ptr<Conv2dKernel> make_conv2d(const Conv2dShape& shape) = 0;
  virtual std::unique_ptr<LinearKernel> make_linear(const LinearShape& shape) = 0;
  virtual std::unique_ptr<Pool2dKernel> make_pool2d(PoolKind kind, const Pool2dShape& shape) = 0;
  virtual std::unique_ptr<AdaptiveAvgPoolKernel> make_adaptive_avgpool(const AdaptiveAvgPoolShape& shape) = 0;
  virtual std::unique_ptr<ActivationKernel> make_activation(Activation kind, int64_t elements) = 0;
  virtual std::unique_ptr<AddKernel> make_add(int inputs, int64_t elements) = 0;
  // `input_dims` are the full local shapes (batch included); `axis` indexes them.
  virtual std::unique_ptr<ConcatKernel> make_concat(std::vector<Dims> input_dims, int axis) = 0;
  virtual std::unique_ptr<BatchNormKernel> make_batchnorm(const BatchNormShape& shape) = 0;
  virtual std::unique_ptr<LayerNormKernel> make_layernorm(const LayerNormShape& shape) = 0;
  virtual std::unique_ptr<DropoutKernel> make_dropout(double probability) = 0;
  virtual std::unique_ptr<SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(
      const SoftmaxCrossEntropyShape& shape) = 0;
  virtual std::unique_ptr<EmbeddingKernel> make_embedding(const EmbeddingShape& shape) = 0;
  virtual std::unique_ptr<BatchedMatmulKernel> make_batched_matmul(const BatchedMatmulShape& shape) = 0;
  virtual std::unique_ptr<SelfAttentionKernel> make_self_attention(const AttentionShape& shape) = 0;
  virtual std::unique_ptr<ArrayKernel> make_array_kernel() = 0;
  // Memory an op keeps between its passes, where this factory's kernels read it.
  virtual std::unique_ptr<KeptBuffer> make_kept_buffer(int64_t bytes) = 0;
};

}  // namespace splitbrain::exec::kernels
