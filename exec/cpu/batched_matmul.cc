#include "exec/cpu/batched_matmul.h"

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

namespace {
// A logical [batch, rows, cols] matrix stored row-major, or stored transposed ([batch, cols,
// rows]), which is format acb of the logical dims.
dnnl::memory::desc matrix_desc(int64_t batch, int64_t rows, int64_t cols, bool transposed) {
  if (!transposed) return plain_desc({batch, rows, cols});
  dnnl::memory::desc desc;
  SB_DNNL_CHECK(
      desc = dnnl::memory::desc({batch, rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::acb));
  return desc;
}
}  // namespace

BatchedMatmulKernel::BatchedMatmulKernel(CpuContext& context, const kernels::BatchedMatmulShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {
  a_md_ = matrix_desc(shape.batch, shape.m, shape.k, shape.transpose_a);
  b_md_ = matrix_desc(shape.batch, shape.k, shape.n, shape.transpose_b);
  c_md_ = plain_desc({shape.batch, shape.m, shape.n});
  dnnl::primitive_attr attr;
  if (shape.alpha != 1.0f) SB_DNNL_CHECK(attr.set_output_scales(0, {shape.alpha}));
  dnnl::matmul::primitive_desc pd;
  SB_DNNL_CHECK(pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md_, b_md_, c_md_), attr, context.engine()));
  SB_DNNL_CHECK(matmul_ = dnnl::matmul(pd));
}

void BatchedMatmulKernel::run(const float* a, const float* b, float* c) {
  const dnnl::engine& engine = context_.engine();
  SB_DNNL_CHECK(matmul_.execute(context_.stream(), {{DNNL_ARG_SRC, wrap(a_md_, engine, a)},
                                                    {DNNL_ARG_WEIGHTS, wrap(b_md_, engine, b)},
                                                    {DNNL_ARG_DST, wrap(c_md_, engine, c)}}));
  SB_DNNL_CHECK(context_.stream().wait());
}

std::unique_ptr<kernels::BatchedMatmulKernel> make_batched_matmul(CpuContext& context,
                                                                  const kernels::BatchedMatmulShape& shape) {
  return std::make_unique<BatchedMatmulKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
