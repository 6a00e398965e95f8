#include "exec/cpu/pooling.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

namespace {

// The bottom/right padding oneDNN needs so that its window count equals ours: the given one,
// or more when ceil_mode's last window reaches past it.
int64_t effective_pad_hi(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t out, int64_t kernel, int64_t stride) {
  return std::max(pad_hi, (out - 1) * stride + kernel - in - pad_lo);
}

}  // namespace

Pool2dKernel::Pool2dKernel(CpuContext& context, kernels::PoolKind kind, const kernels::Pool2dShape& shape)
    : context_(context), kind_(kind), shape_(kernels::checked(kind, shape)) {
  const auto& s = shape;
  const int64_t pad_bottom =
      effective_pad_hi(s.height, s.pad_top, s.pad_bottom, s.out_height(), s.kernel_h, s.stride_h);
  const int64_t pad_right = effective_pad_hi(s.width, s.pad_left, s.pad_right, s.out_width(), s.kernel_w, s.stride_w);

  const dnnl::engine& engine = context.engine();
  x_md_ = plain_desc({s.batch, s.channels, s.height, s.width});
  y_md_ = plain_desc({s.batch, s.channels, s.out_height(), s.out_width()});
  const auto algo =
      kind == kernels::PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding;
  const Dims strides{s.stride_h, s.stride_w}, kernel{s.kernel_h, s.kernel_w};
  const Dims pad_l{s.pad_top, s.pad_left}, pad_r{pad_bottom, pad_right};

  dnnl::pooling_forward::primitive_desc fwd_pd;
  SB_DNNL_CHECK(fwd_pd = dnnl::pooling_forward::primitive_desc(
                    dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, algo, x_md_, y_md_, strides, kernel,
                                                pad_l, pad_r),
                    engine));
  SB_DNNL_CHECK(forward_ = dnnl::pooling_forward(fwd_pd));
  workspace_md_ = fwd_pd.workspace_desc();

  dnnl::pooling_backward::primitive_desc bwd_pd;
  SB_DNNL_CHECK(bwd_pd = dnnl::pooling_backward::primitive_desc(
                    dnnl::pooling_backward::desc(algo, x_md_, y_md_, strides, kernel, pad_l, pad_r), engine, fwd_pd));
  SB_DNNL_CHECK(backward_ = dnnl::pooling_backward(bwd_pd));
}

std::size_t Pool2dKernel::workspace_bytes() const { return workspace_md_.get_size(); }

void Pool2dKernel::forward(const float* x, float* y, void* workspace) {
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, wrap(x_md_, engine, x)},
                                             {DNNL_ARG_DST, wrap(y_md_, engine, y)}};
  if (workspace_bytes() > 0) {
    if (workspace == nullptr)
      throw kernels::KernelArgumentError("Pool2dKernel::forward: max pooling needs a workspace");
    args.emplace(DNNL_ARG_WORKSPACE, wrap(workspace_md_, engine, workspace));
  }
  SB_DNNL_CHECK(forward_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

void Pool2dKernel::backward(const float* dy, const void* workspace, float* dx) {
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, wrap(y_md_, engine, dy)},
                                             {DNNL_ARG_DIFF_SRC, wrap(x_md_, engine, dx)}};
  if (workspace_bytes() > 0) {
    if (workspace == nullptr)
      throw kernels::KernelArgumentError("Pool2dKernel::backward: max pooling needs a workspace");
    args.emplace(DNNL_ARG_WORKSPACE, wrap(workspace_md_, engine, workspace));
  }
  SB_DNNL_CHECK(backward_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

std::unique_ptr<kernels::Pool2dKernel> make_pool2d(CpuContext& context, kernels::PoolKind kind,
                                                   const kernels::Pool2dShape& shape) {
  return std::make_unique<Pool2dKernel>(context, kind, shape);
}

}  // namespace splitbrain::exec::cpu
