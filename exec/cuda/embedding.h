#pragma once
// Embedding lookup (exec/kernels/embedding.h) on the GPU: the twin of cpu::EmbeddingKernel (same
// shape, vocabulary-split tables). Own gather and scatter-add kernels (indexing_kernels.h).
// Backward ADDS into dtable as on the CPU; its atomic adds make the order of repeated ids'
// additions, and so the last bits, vary from run to run. Learned positions take their ids from
// kernels::embedding_positions, shared by both backends.
//
// Host or device arrays in and out (see cuda_context.h), staged in the context's staging buffers; every
// call synchronises.

#include <cstdint>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/embedding.h"

namespace splitbrain::exec::cuda {

class EmbeddingKernel final : public kernels::EmbeddingKernel {
 public:
  // Throws KernelArgumentError on a bad shape; forward and backward on ids outside the table.
  EmbeddingKernel(CudaContext& context, const kernels::EmbeddingShape& shape);

  const kernels::EmbeddingShape& shape() const override { return shape_; }
  void forward(const float* ids, const float* table, float* y) override;
  void backward(const float* ids, const float* dy, float* dtable) override;

 private:
  CudaContext& context_;
  kernels::EmbeddingShape shape_;
  EmbeddingRows rows_;
};

}  // namespace splitbrain::exec::cuda
