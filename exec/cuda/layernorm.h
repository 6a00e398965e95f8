#pragma once
// Layer normalisation over the last dimension on the GPU: the twin of cpu::LayerNormKernel (same
// shape type; mean and biased variance per row kept in caller buffers of `rows` floats). Own
// kernels (normalization_kernels.h): cuDNN's legacy API has no layer norm.
//
// Host or device arrays in and out (see cuda_context.h): every call uploads its inputs into the device
// buffers this object allocates once, runs on the context's stream and synchronises.

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/device_buffer.h"
#include "exec/kernels/layernorm.h"

namespace splitbrain::exec::cuda {

class LayerNormKernel final : public kernels::LayerNormKernel {
 public:
  LayerNormKernel(CudaContext& context, const kernels::LayerNormShape& shape);
  const kernels::LayerNormShape& shape() const override { return shape_; }

  // y = (x - mean) / sqrt(var + eps) * gamma + beta; writes mean[rows] and variance[rows].
  void forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* variance) override;
  // dx, dgamma and dbeta (all overwritten) from the saved x, mean and variance.
  void backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* variance,
                float* dx, float* dgamma, float* dbeta) override;

 private:
  CudaContext& context_;
  kernels::LayerNormShape shape_;
  DeviceBuffer x_, y_, dx_;       // [rows, features]; y_ holds dy in backward
  DeviceBuffer gamma_, beta_;     // [features]; beta_ holds dbeta in backward
  DeviceBuffer dgamma_;           // [features]
  DeviceBuffer mean_, variance_;  // [rows]
};

}  // namespace splitbrain::exec::cuda
