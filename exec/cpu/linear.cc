#include "exec/cpu/linear.h"

#include <string>
#include <unordered_map>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

LinearKernel::LinearKernel(CpuContext& context, const kernels::LinearShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {
  const dnnl::engine& engine = context.engine();
  x_md_ = plain_desc({shape.rows, shape.in_features});
  w_md_ = plain_desc({shape.out_features, shape.in_features});
  b_md_ = plain_desc({shape.out_features});
  y_md_ = plain_desc({shape.rows, shape.out_features});
  const dnnl::memory::desc bias_md = shape.bias ? b_md_ : dnnl::memory::desc();

  dnnl::inner_product_forward::primitive_desc fwd_pd;
  SB_DNNL_CHECK(
      fwd_pd = dnnl::inner_product_forward::primitive_desc(
          dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, x_md_, w_md_, bias_md, y_md_), engine));
  SB_DNNL_CHECK(forward_ = dnnl::inner_product_forward(fwd_pd));

  dnnl::inner_product_backward_data::primitive_desc bwd_pd;
  SB_DNNL_CHECK(bwd_pd = dnnl::inner_product_backward_data::primitive_desc(
                    dnnl::inner_product_backward_data::desc(x_md_, w_md_, y_md_), engine, fwd_pd));
  SB_DNNL_CHECK(backward_data_ = dnnl::inner_product_backward_data(bwd_pd));

  dnnl::inner_product_backward_weights::primitive_desc bww_pd;
  SB_DNNL_CHECK(bww_pd = dnnl::inner_product_backward_weights::primitive_desc(
                    shape.bias ? dnnl::inner_product_backward_weights::desc(x_md_, w_md_, b_md_, y_md_)
                               : dnnl::inner_product_backward_weights::desc(x_md_, w_md_, y_md_),
                    engine, fwd_pd));
  SB_DNNL_CHECK(backward_weights_ = dnnl::inner_product_backward_weights(bww_pd));
  if (shape.bias) zero_bias_.assign(static_cast<std::size_t>(shape.out_features), 0.0f);
}

void LinearKernel::forward(const float* x, const float* w, const float* b, float* y) {
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, wrap(x_md_, engine, x)},
                                             {DNNL_ARG_WEIGHTS, wrap(w_md_, engine, w)},
                                             {DNNL_ARG_DST, wrap(y_md_, engine, y)}};
  if (shape_.bias) args.emplace(DNNL_ARG_BIAS, wrap(b_md_, engine, b != nullptr ? b : zero_bias_.data()));
  SB_DNNL_CHECK(forward_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

void LinearKernel::backward_data(const float* dy, const float* w, float* dx) {
  const dnnl::engine& engine = context_.engine();
  SB_DNNL_CHECK(backward_data_.execute(context_.stream(), {{DNNL_ARG_DIFF_DST, wrap(y_md_, engine, dy)},
                                                           {DNNL_ARG_WEIGHTS, wrap(w_md_, engine, w)},
                                                           {DNNL_ARG_DIFF_SRC, wrap(x_md_, engine, dx)}}));
  SB_DNNL_CHECK(context_.stream().wait());
}

void LinearKernel::backward_weights(const float* x, const float* dy, float* dw, float* db) {
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, wrap(x_md_, engine, x)},
                                             {DNNL_ARG_DIFF_DST, wrap(y_md_, engine, dy)},
                                             {DNNL_ARG_DIFF_WEIGHTS, wrap(w_md_, engine, dw)}};
  if (shape_.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(b_md_, engine, db));
  SB_DNNL_CHECK(backward_weights_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

void LinearKernel::accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) {
  // Row-major: dW [out x in] += dy^T [out x rows] . x [rows x in].
  const dnnl_dim_t rows = shape_.rows, in = shape_.in_features, out = shape_.out_features;
  // dnnl::sgemm reports failure in its status rather than by throwing.
  const dnnl::status status = dnnl::sgemm('T', 'N', out, in, rows, 1.0f, dy, out, x, in, 1.0f, dw, in);
  if (status != dnnl::status::success) {
    throw kernels::KernelArgumentError("LinearKernel::accumulate_weight_gradients: dnnl_sgemm failed with status " +
                                       std::to_string(static_cast<int>(status)));
  }
  if (db == nullptr) return;
  for (dnnl_dim_t r = 0; r < rows; ++r) {
    const float* row = dy + r * out;
    for (dnnl_dim_t o = 0; o < out; ++o) db[o] += row[o];
  }
}

std::unique_ptr<kernels::LinearKernel> make_linear(CpuContext& context, const kernels::LinearShape& shape) {
  return std::make_unique<LinearKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
