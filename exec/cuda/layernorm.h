#pragma once
// Layer normalisation over the last dimension on the GPU: the twin of cpu::LayerNormKernel (same
// shape type; mean and biased variance per row kept in caller buffers of `rows` floats). Own
// kernels (normalization_kernels.h): cuDNN's legacy API has no layer norm.
//
// Every argument is device memory (cuda_context.h): the kernels run on the caller's pointers,
// queued on the context's stream, and return without waiting. A null dx skips the input gradient
// (the CPU computes it into a scratch buffer instead).

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/layernorm.h"

namespace splitbrain::exec::cuda {

class LayerNormKernel final : public kernels::LayerNormKernel {
 public:
  LayerNormKernel(CudaContext& context, const kernels::LayerNormShape& shape);
  const kernels::LayerNormShape& shape() const override { return shape_; }

  // y = (x - mean) / sqrt(var + eps) * gamma + beta; writes mean[rows] and variance[rows].
  void forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* variance) override;
  // dx (overwritten; may be null) from the saved x, mean and variance; dgamma and dbeta added into.
  void backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* variance,
                float* dx, float* dgamma, float* dbeta) override;

 private:
  CudaContext& context_;
  kernels::LayerNormShape shape_;
};

}  // namespace splitbrain::exec::cuda
