#pragma once
// Embedding lookup on a row-split table (exec/kernels/embedding.h). Own code: a gather and a
// scatter-add, which oneDNN has no primitive for.

#include <cstdint>

#include "exec/kernels/embedding.h"

namespace splitbrain::exec::cpu {

class EmbeddingKernel final : public kernels::EmbeddingKernel {
 public:
  // Throws KernelArgumentError on a row range outside the table; forward and backward throw it
  // on ids outside [0, num_embeddings).
  explicit EmbeddingKernel(const kernels::EmbeddingShape& shape);
  const kernels::EmbeddingShape& shape() const override { return shape_; }

  void forward(const float* ids, const float* table, float* y) override;
  void backward(const float* ids, const float* dy, float* dtable) override;

 private:
  kernels::EmbeddingShape shape_;
};

}  // namespace splitbrain::exec::cpu
