#include "exec/cpu/eltwise.h"

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

ActivationKernel::ActivationKernel(CpuContext& context, kernels::Activation kind, int64_t elements)
    : context_(context), kind_(kind), elements_(kernels::checked_activation_elements(elements)) {
  const dnnl::engine& engine = context.engine();
  md_ = plain_desc({elements});
  const auto algo = kind == kernels::Activation::relu ? dnnl::algorithm::eltwise_relu_use_dst_for_bwd
                                                      : dnnl::algorithm::eltwise_gelu_tanh;
  dnnl::eltwise_forward::primitive_desc fwd_pd;
  SB_DNNL_CHECK(fwd_pd = dnnl::eltwise_forward::primitive_desc(
                    dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, algo, md_, 0.0f, 0.0f), engine));
  SB_DNNL_CHECK(forward_ = dnnl::eltwise_forward(fwd_pd));
  dnnl::eltwise_backward::primitive_desc bwd_pd;
  SB_DNNL_CHECK(bwd_pd = dnnl::eltwise_backward::primitive_desc(
                    dnnl::eltwise_backward::desc(algo, md_, md_, 0.0f, 0.0f), engine, fwd_pd));
  SB_DNNL_CHECK(backward_ = dnnl::eltwise_backward(bwd_pd));
}

void ActivationKernel::forward(const float* x, float* y) {
  const dnnl::engine& engine = context_.engine();
  SB_DNNL_CHECK(forward_.execute(context_.stream(),
                                 {{DNNL_ARG_SRC, wrap(md_, engine, x)}, {DNNL_ARG_DST, wrap(md_, engine, y)}}));
  SB_DNNL_CHECK(context_.stream().wait());
}

void ActivationKernel::backward(const float* saved, const float* dy, float* dx) {
  const dnnl::engine& engine = context_.engine();
  // The _use_dst_for_bwd algorithms read DNNL_ARG_DST; the others DNNL_ARG_SRC.
  const int saved_arg = kind_ == kernels::Activation::relu ? DNNL_ARG_DST : DNNL_ARG_SRC;
  SB_DNNL_CHECK(backward_.execute(context_.stream(), {{saved_arg, wrap(md_, engine, saved)},
                                                      {DNNL_ARG_DIFF_DST, wrap(md_, engine, dy)},
                                                      {DNNL_ARG_DIFF_SRC, wrap(md_, engine, dx)}}));
  SB_DNNL_CHECK(context_.stream().wait());
}

std::unique_ptr<kernels::ActivationKernel> make_activation(CpuContext& context, kernels::Activation kind,
                                                           int64_t elements) {
  return std::make_unique<ActivationKernel>(context, kind, elements);
}

}  // namespace splitbrain::exec::cpu
