#pragma once
// Embedding lookup (exec/kernels/embedding.h) on the GPU: the twin of cpu::EmbeddingKernel (same
// shape, vocabulary-split tables). Own gather and scatter-add kernels (indexing_kernels.h).
// Backward ADDS into dtable as on the CPU; its atomic adds make the order of repeated ids'
// additions, and so the last bits, vary from run to run. Learned positions take their ids from
// kernels::embedding_positions, shared by both backends.
//
// table, y, dy and dtable are device memory (cuda_context.h). The ids are device memory (token
// ids, an activation) or HOST memory (the op's learned positions): the ids are checked on the
// host, so device ids are copied back and the call synchronises once for them; host ids are
// checked where they are, then staged into the context's staging buffer (from pageable memory
// the copy has taken them when the call returns). The kernels then run on the caller's pointers,
// queued on the context's stream, and the call returns without waiting for them.

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
  // Checks the ids (KernelArgumentError) and returns them in device memory, on the stream.
  const float* checked_device_ids(const float* ids);

  CudaContext& context_;
  kernels::EmbeddingShape shape_;
  EmbeddingRows rows_;
};

}  // namespace splitbrain::exec::cuda
