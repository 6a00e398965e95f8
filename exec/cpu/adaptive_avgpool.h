#pragma once
// Adaptive average pooling (exec/kernels/adaptive_avgpool.h). Own code: bins that vary in size
// and may overlap cannot be one oneDNN pooling window/stride; the op is small (mostly global
// average pooling before the classifier) and bandwidth-bound anyway.

#include "exec/kernels/adaptive_avgpool.h"

namespace splitbrain::exec::cpu {

class AdaptiveAvgPoolKernel final : public kernels::AdaptiveAvgPoolKernel {
 public:
  // Throws KernelArgumentError unless every dim is positive.
  explicit AdaptiveAvgPoolKernel(const kernels::AdaptiveAvgPoolShape& shape);
  const kernels::AdaptiveAvgPoolShape& shape() const override { return shape_; }

  void forward(const float* x, float* y) override;
  void backward(const float* dy, float* dx) override;

 private:
  kernels::AdaptiveAvgPoolShape shape_;
};

}  // namespace splitbrain::exec::cpu
