#include "exec/cpu/concat.h"

#include <algorithm>
#include <unordered_map>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

ConcatKernel::ConcatKernel(CpuContext& context, std::vector<Dims> input_dims, int axis)
    : context_(context), geometry_(kernels::concat_geometry(input_dims, axis)) {
  for (const Dims& dims : input_dims) input_mds_.push_back(plain_desc(dims));
  output_md_ = plain_desc(geometry_.output_dims);
  dnnl::concat::primitive_desc pd;
  SB_DNNL_CHECK(pd = dnnl::concat::primitive_desc(output_md_, axis, input_mds_, context.engine()));
  SB_DNNL_CHECK(concat_ = dnnl::concat(pd));
}

void ConcatKernel::forward(std::span<const float* const> xs, float* y) {
  kernels::check_concat_inputs(xs.size(), input_mds_.size());
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, wrap(output_md_, engine, y)}};
  for (std::size_t i = 0; i < xs.size(); ++i)
    args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), wrap(input_mds_[i], engine, xs[i]));
  SB_DNNL_CHECK(concat_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

void ConcatKernel::backward(const float* dy, std::span<float* const> dxs) const {
  kernels::check_concat_gradients(dxs.size(), input_mds_.size());
  const kernels::ConcatGeometry& g = geometry_;
  for (std::size_t i = 0; i < dxs.size(); ++i) {
    for (int64_t o = 0; o < g.outer; ++o)
      std::copy_n(dy + o * g.output_run + g.starts[i], g.runs[i], dxs[i] + o * g.runs[i]);
  }
}

std::unique_ptr<kernels::ConcatKernel> make_concat(CpuContext& context, std::vector<kernels::Dims> input_dims,
                                                   int axis) {
  return std::make_unique<ConcatKernel>(context, std::move(input_dims), axis);
}

}  // namespace splitbrain::exec::cpu
