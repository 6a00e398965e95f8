#pragma once
// Adaptive average pooling (exec/kernels/adaptive_avgpool.h) on the GPU: the twin of
// cpu::AdaptiveAvgPoolKernel (PyTorch's uneven and possibly overlapping bins). Own kernels
// (indexing_kernels.h); backward gathers per input element, so it needs no atomics and is
// deterministic.
//
// x, y, dy and dx are device memory (cuda_context.h): the kernels run on the caller's pointers,
// queued on the context's stream, and return without waiting.

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/indexing_kernels.h"
#include "exec/kernels/adaptive_avgpool.h"

namespace splitbrain::exec::cuda {

class AdaptiveAvgPoolKernel final : public kernels::AdaptiveAvgPoolKernel {
 public:
  // Throws KernelArgumentError unless every dim is positive.
  AdaptiveAvgPoolKernel(CudaContext& context, const kernels::AdaptiveAvgPoolShape& shape);

  const kernels::AdaptiveAvgPoolShape& shape() const override { return shape_; }
  void forward(const float* x, float* y) override;
  void backward(const float* dy, float* dx) override;

 private:
  CudaContext& context_;
  kernels::AdaptiveAvgPoolShape shape_;
  AdaptiveBins bins_;
};

}  // namespace splitbrain::exec::cuda
