#pragma once
// Embedding lookup (exec/kernels/embedding.h) on the GPU: the twin of cpu::EmbeddingKernel (same
// shape, vocabulary-split tables). Own gather and scatter-add kernels (indexing_kernels.h).
// Backward ADDS into dtable as on the CPU; its atomic adds make the order of repeated ids'
// additions, and so the last bits, vary from run to run. Learned positions take their ids from
// kernels::embedding_positions, shared by both backends.
//
// table, y, dy and dtable are device memory (cuda_context.h). Ids in device memory (the runtime's
// token ids and the op's positions) are not read back: the op checked them on the host where they
// came from (kernels::check_embedding_ids), and an id outside the local rows, valid or not, reads
// and writes nothing. Ids in host memory (tests) are checked where they are, then staged into the
// context's staging buffer (from pageable memory the copy has taken them when the call returns).
// The kernels then run on the caller's pointers, queued on the context's stream, and the call
// returns without waiting for them.

#include <cstdint>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/embedding.h"

namespace splitbrain::exec::cuda {

class EmbeddingKernel final : public kernels::EmbeddingKernel {
 public:
  // Throws KernelArgumentError on a bad shape; forward and backward on host ids outside the table.
  EmbeddingKernel(CudaContext& context, const kernels::EmbeddingShape& shape);

  const kernels::EmbeddingShape& shape() const override { return shape_; }
  void forward(const float* ids, const float* table, float* y) override;
  void backward(const float* ids, const float* dy, float* dtable) override;

 private:
  // The ids in device memory: as they are, or host ids checked (KernelArgumentError) and staged.
  const float* device_ids(const float* ids);

  CudaContext& context_;
  kernels::EmbeddingShape shape_;
  EmbeddingRows rows_;
};

}  // namespace splitbrain::exec::cuda
