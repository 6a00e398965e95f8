#pragma once
// Softmax cross-entropy (exec/kernels/softmax_cross_entropy.h). Own code, not oneDNN's softmax:
// the loss needs log-sum-exp per row (loss = lse - x[label], finite even where the softmax
// underflows to 0), which the softmax primitive does not return, and forward, loss and backward
// fuse into two passes over the row.

#include <cstdint>
#include <span>

#include "exec/kernels/softmax_cross_entropy.h"

namespace splitbrain::exec::cpu {

class SoftmaxCrossEntropyKernel final : public kernels::SoftmaxCrossEntropyKernel {
 public:
  // Throws KernelArgumentError unless rows and classes are positive.
  explicit SoftmaxCrossEntropyKernel(const kernels::SoftmaxCrossEntropyShape& shape);
  const kernels::SoftmaxCrossEntropyShape& shape() const override { return shape_; }

  void forward(const float* logits, const int32_t* labels, float* probs, double scale, double* loss,
               std::span<float> loss_output) override;
  void backward(const float* probs, const int32_t* labels, float scale, float* dlogits) override;

 private:
  kernels::SoftmaxCrossEntropyShape shape_;
};

}  // namespace splitbrain::exec::cpu
