#pragma once
// Layer normalisation (exec/kernels/layernorm.h) with oneDNN's layer_normalization forward and
// backward; the saved variance is oneDNN's (biased).

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"
#include "exec/kernels/layernorm.h"

namespace splitbrain::exec::cpu {

class LayerNormKernel final : public kernels::LayerNormKernel {
 public:
  LayerNormKernel(CpuContext& context, const kernels::LayerNormShape& shape);
  const kernels::LayerNormShape& shape() const override { return shape_; }

  void forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* variance) override;
  void backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* variance,
                float* dx, float* dgamma, float* dbeta) override;

 private:
  CpuContext& context_;
  kernels::LayerNormShape shape_;
  dnnl::memory::desc data_md_, stat_md_, param_md_;
  dnnl::layer_normalization_forward forward_;
  dnnl::layer_normalization_backward backward_;
  // oneDNN 2.6's backward with use_shift insists on a DNNL_ARG_SHIFT argument although dx,
  // dgamma and dbeta do not depend on beta: it gets these zeros.
  std::vector<float> unused_shift_;
  // oneDNN overwrites its outputs; backward adds these into the caller's dgamma and dbeta, and
  // writes dx here when the caller wants none.
  std::vector<float> fresh_dgamma_, fresh_dbeta_, unused_dx_;
};

}  // namespace splitbrain::exec::cpu
