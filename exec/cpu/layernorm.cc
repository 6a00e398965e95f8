#include "exec/cpu/layernorm.h"

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

LayerNormKernel::LayerNormKernel(CpuContext& context, const kernels::LayerNormShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {
  const dnnl::engine& engine = context.engine();
  data_md_ = plain_desc({shape.rows, shape.features});
  stat_md_ = plain_desc({shape.rows});
  param_md_ = plain_desc({shape.features});
  // use_scale and use_shift take gamma and beta as two separate arrays (use_scale_shift would
  // want them packed into one [2, features] buffer).
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  const auto epsilon = static_cast<float>(shape.epsilon);

  dnnl::layer_normalization_forward::primitive_desc fwd_pd;
  SB_DNNL_CHECK(fwd_pd = dnnl::layer_normalization_forward::primitive_desc(
                    dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, data_md_, stat_md_,
                                                            epsilon, flags),
                    engine));
  SB_DNNL_CHECK(forward_ = dnnl::layer_normalization_forward(fwd_pd));
  dnnl::layer_normalization_backward::primitive_desc bwd_pd;
  SB_DNNL_CHECK(bwd_pd = dnnl::layer_normalization_backward::primitive_desc(
                    dnnl::layer_normalization_backward::desc(dnnl::prop_kind::backward, data_md_, data_md_, stat_md_,
                                                             epsilon, flags),
                    engine, fwd_pd));
  SB_DNNL_CHECK(backward_ = dnnl::layer_normalization_backward(bwd_pd));
  unused_shift_.assign(static_cast<std::size_t>(shape.features), 0.0f);
  fresh_dgamma_.resize(static_cast<std::size_t>(shape.features));
  fresh_dbeta_.resize(static_cast<std::size_t>(shape.features));
}

void LayerNormKernel::forward(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                              float* variance) {
  const dnnl::engine& engine = context_.engine();
  SB_DNNL_CHECK(forward_.execute(context_.stream(), {{DNNL_ARG_SRC, wrap(data_md_, engine, x)},
                                                     {DNNL_ARG_SCALE, wrap(param_md_, engine, gamma)},
                                                     {DNNL_ARG_SHIFT, wrap(param_md_, engine, beta)},
                                                     {DNNL_ARG_DST, wrap(data_md_, engine, y)},
                                                     {DNNL_ARG_MEAN, wrap(stat_md_, engine, mean)},
                                                     {DNNL_ARG_VARIANCE, wrap(stat_md_, engine, variance)}}));
  SB_DNNL_CHECK(context_.stream().wait());
}

void LayerNormKernel::backward(const float* x, const float* dy, const float* gamma, const float* mean,
                               const float* variance, float* dx, float* dgamma, float* dbeta) {
  const dnnl::engine& engine = context_.engine();
  if (dx == nullptr) {
    unused_dx_.resize(static_cast<std::size_t>(shape_.rows * shape_.features));
    dx = unused_dx_.data();
  }
  SB_DNNL_CHECK(
      backward_.execute(context_.stream(), {{DNNL_ARG_SRC, wrap(data_md_, engine, x)},
                                            {DNNL_ARG_DIFF_DST, wrap(data_md_, engine, dy)},
                                            {DNNL_ARG_SCALE, wrap(param_md_, engine, gamma)},
                                            {DNNL_ARG_SHIFT, wrap(param_md_, engine, unused_shift_.data())},
                                            {DNNL_ARG_MEAN, wrap(stat_md_, engine, mean)},
                                            {DNNL_ARG_VARIANCE, wrap(stat_md_, engine, variance)},
                                            {DNNL_ARG_DIFF_SRC, wrap(data_md_, engine, dx)},
                                            {DNNL_ARG_DIFF_SCALE, wrap(param_md_, engine, fresh_dgamma_.data())},
                                            {DNNL_ARG_DIFF_SHIFT, wrap(param_md_, engine, fresh_dbeta_.data())}}));
  SB_DNNL_CHECK(context_.stream().wait());
  for (std::size_t f = 0; f < fresh_dgamma_.size(); ++f) {
    dgamma[f] += fresh_dgamma_[f];
    dbeta[f] += fresh_dbeta_[f];
  }
}

std::unique_ptr<kernels::LayerNormKernel> make_layernorm(CpuContext& context, const kernels::LayerNormShape& shape) {
  return std::make_unique<LayerNormKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
