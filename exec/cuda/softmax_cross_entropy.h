#pragma once
// Softmax cross-entropy (exec/kernels/softmax_cross_entropy.h) on the GPU: the twin of
// cpu::SoftmaxCrossEntropyKernel. Forward is cuDNN's log-softmax (CUDNN_SOFTMAX_LOG,
// max-subtracted, so -log p[label] stays finite where p underflows, as the CPU's log-sum-exp)
// followed by an own kernel that reads the row losses and turns the log-probabilities into
// probabilities in place, and one that sums the row losses in a fixed order (one block: the same
// sum every run); backward is an own kernel.
//
// Every argument is device memory (cuda_context.h), computed on directly; the op checked the
// labels on the host before it uploaded them (kernels::check_labels). Neither pass waits for the
// device: the loss stays in device memory until the op queues its download. probs == logits is
// allowed (cuDNN does not
// document an in-place softmax, so the logits are first copied to a staging buffer);
// dlogits == probs is allowed (each element reads its own probability only).

#include <cstdint>
#include <span>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/softmax_cross_entropy.h"

namespace splitbrain::exec::cuda {

class SoftmaxCrossEntropyKernel final : public kernels::SoftmaxCrossEntropyKernel {
 public:
  // Throws KernelArgumentError unless rows and classes are positive.
  SoftmaxCrossEntropyKernel(CudaContext& context, const kernels::SoftmaxCrossEntropyShape& shape);

  const kernels::SoftmaxCrossEntropyShape& shape() const override { return shape_; }
  void forward(const float* logits, const int32_t* labels, float* probs, double scale, double* loss,
               std::span<float> loss_output) override;
  void backward(const float* probs, const int32_t* labels, float scale, float* dlogits) override;

 private:
  CudaContext& context_;
  kernels::SoftmaxCrossEntropyShape shape_;
};

}  // namespace splitbrain::exec::cuda
