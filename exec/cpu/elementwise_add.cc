#include "exec/cpu/elementwise_add.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

AddKernel::AddKernel(CpuContext& context, int inputs, int64_t elements)
    : context_(context), inputs_(inputs), elements_(kernels::checked_add_elements(inputs, elements)) {
  md_ = plain_desc({elements});
  const std::vector<float> scales(static_cast<std::size_t>(inputs), 1.0f);
  const std::vector<dnnl::memory::desc> sources(static_cast<std::size_t>(inputs), md_);
  dnnl::sum::primitive_desc pd;
  SB_DNNL_CHECK(pd = dnnl::sum::primitive_desc(md_, scales, sources, context.engine()));
  SB_DNNL_CHECK(sum_ = dnnl::sum(pd));
}

void AddKernel::forward(std::span<const float* const> xs, float* y) {
  kernels::check_add_inputs(xs.size(), inputs_);
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, wrap(md_, engine, y)}};
  for (std::size_t i = 0; i < xs.size(); ++i)
    args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), wrap(md_, engine, xs[i]));
  SB_DNNL_CHECK(sum_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

std::unique_ptr<kernels::AddKernel> make_add(CpuContext& context, int inputs, int64_t elements) {
  return std::make_unique<AddKernel>(context, inputs, elements);
}

}  // namespace splitbrain::exec::cpu
