#pragma once
// Layer normalisation over the last dimension (PyTorch's nn.LayerNorm(features)) of a local
// [rows, features] fp32 tensor (rows = N*T), with learned scale (gamma) and shift (beta): oneDNN
// layer_normalization forward and backward. Forward keeps each row's mean and variance
// (biased, oneDNN's convention) in caller buffers of `rows` floats for backward.
//
// Rows are independent, so splitting the batch or the sequence needs no communication; the
// features are never split (plans/op_sharding: no `out` role for layernorm).

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

struct LayerNormShape {
  int64_t rows = 1;
  int64_t features = 1;
  double epsilon = 1e-5;
};

class LayerNormKernel {
 public:
  LayerNormKernel(CpuContext& context, const LayerNormShape& shape);
  const LayerNormShape& shape() const { return shape_; }

  // y = (x - mean) / sqrt(var + eps) * gamma + beta; writes mean[rows] and variance[rows].
  void forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* variance);
  // dx, dgamma and dbeta (all overwritten) from the saved x, mean and variance.
  void backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* variance,
                float* dx, float* dgamma, float* dbeta);

 private:
  CpuContext& context_;
  LayerNormShape shape_;
  dnnl::memory::desc data_md_, stat_md_, param_md_;
  dnnl::layer_normalization_forward forward_;
  dnnl::layer_normalization_backward backward_;
  // oneDNN 2.6's backward with use_shift insists on a DNNL_ARG_SHIFT argument although dx,
  // dgamma and dbeta do not depend on beta: it gets these zeros.
  std::vector<float> unused_shift_;
};

}  // namespace splitbrain::exec::cpu
