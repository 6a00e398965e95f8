#include "exec/cpu/conv2d.h"

#include <string>
#include <unordered_map>

#include "exec/cpu/dnnl_check.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

Conv2dKernel::Conv2dKernel(CpuContext& context, const kernels::Conv2dShape& shape)
    : context_(context), shape_(kernels::checked(shape)) {
  const auto& s = shape;
  const dnnl::engine& engine = context.engine();
  const Dims x_dims{s.batch, s.in_channels, s.height, s.width};
  const Dims y_dims{s.batch, s.out_channels, s.out_height(), s.out_width()};
  // Grouped weights are 5-D for oneDNN (g, oc/g, ic/g, kh, kw): the same bytes as PyTorch's
  // [oc, ic/g, kh, kw], so the caller's buffer needs no reshuffling.
  const Dims w_dims = s.groups == 1
                          ? Dims{s.out_channels, s.in_channels, s.kernel_h, s.kernel_w}
                          : Dims{s.groups, s.out_channels / s.groups, s.in_channels / s.groups, s.kernel_h, s.kernel_w};
  const Dims strides{s.stride_h, s.stride_w};
  const Dims dilates{s.dilation_h - 1, s.dilation_w - 1};
  const Dims pad_l{s.pad_top, s.pad_left};
  const Dims pad_r{s.pad_bottom, s.pad_right};
  bias_md_ = plain_desc({s.out_channels});
  const dnnl::memory::desc no_bias;
  const auto algo = dnnl::algorithm::convolution_direct;

  dnnl::convolution_forward::primitive_desc fwd_pd;
  SB_DNNL_CHECK(fwd_pd = dnnl::convolution_forward::primitive_desc(
                    dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, any_desc(x_dims),
                                                    any_desc(w_dims), s.bias ? bias_md_ : no_bias, any_desc(y_dims),
                                                    strides, dilates, pad_l, pad_r),
                    engine));
  SB_DNNL_CHECK(forward_ = dnnl::convolution_forward(fwd_pd));
  fwd_x_ = StagedMemory(plain_desc(x_dims), fwd_pd.src_desc(), engine);
  fwd_w_ = StagedMemory(plain_desc(w_dims), fwd_pd.weights_desc(), engine);
  fwd_y_ = StagedMemory(plain_desc(y_dims), fwd_pd.dst_desc(), engine);

  dnnl::convolution_backward_data::primitive_desc bwd_pd;
  SB_DNNL_CHECK(bwd_pd = dnnl::convolution_backward_data::primitive_desc(
                    dnnl::convolution_backward_data::desc(algo, any_desc(x_dims), any_desc(w_dims), any_desc(y_dims),
                                                          strides, dilates, pad_l, pad_r),
                    engine, fwd_pd));
  SB_DNNL_CHECK(backward_data_ = dnnl::convolution_backward_data(bwd_pd));
  bwd_dy_ = StagedMemory(plain_desc(y_dims), bwd_pd.diff_dst_desc(), engine);
  bwd_w_ = StagedMemory(plain_desc(w_dims), bwd_pd.weights_desc(), engine);
  bwd_dx_ = StagedMemory(plain_desc(x_dims), bwd_pd.diff_src_desc(), engine);

  dnnl::convolution_backward_weights::primitive_desc bww_pd;
  SB_DNNL_CHECK(bww_pd = dnnl::convolution_backward_weights::primitive_desc(
                    dnnl::convolution_backward_weights::desc(algo, any_desc(x_dims), any_desc(w_dims),
                                                             s.bias ? bias_md_ : no_bias, any_desc(y_dims), strides,
                                                             dilates, pad_l, pad_r),
                    engine, fwd_pd));
  SB_DNNL_CHECK(backward_weights_ = dnnl::convolution_backward_weights(bww_pd));
  bww_x_ = StagedMemory(plain_desc(x_dims), bww_pd.src_desc(), engine);
  bww_dy_ = StagedMemory(plain_desc(y_dims), bww_pd.diff_dst_desc(), engine);
  bww_dw_ = StagedMemory(plain_desc(w_dims), bww_pd.diff_weights_desc(), engine);
  fresh_dw_.resize(static_cast<std::size_t>(s.out_channels * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w));
  if (s.bias) {
    fresh_db_.resize(static_cast<std::size_t>(s.out_channels));
    zero_bias_.assign(static_cast<std::size_t>(s.out_channels), 0.0f);
  }
}

void Conv2dKernel::forward(const float* x, const float* w, const float* b, float* y) {
  dnnl::stream& stream = context_.stream();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, fwd_x_.read(stream, x)},
                                             {DNNL_ARG_WEIGHTS, fwd_w_.read(stream, w)},
                                             {DNNL_ARG_DST, fwd_y_.target(y)}};
  if (shape_.bias) args.emplace(DNNL_ARG_BIAS, wrap(bias_md_, context_.engine(), b != nullptr ? b : zero_bias_.data()));
  SB_DNNL_CHECK(forward_.execute(stream, args));
  fwd_y_.copy_back(stream, y);
  SB_DNNL_CHECK(stream.wait());
}

void Conv2dKernel::backward_data(const float* dy, const float* w, float* dx) {
  dnnl::stream& stream = context_.stream();
  SB_DNNL_CHECK(backward_data_.execute(stream, {{DNNL_ARG_DIFF_DST, bwd_dy_.read(stream, dy)},
                                                {DNNL_ARG_WEIGHTS, bwd_w_.read(stream, w)},
                                                {DNNL_ARG_DIFF_SRC, bwd_dx_.target(dx)}}));
  bwd_dx_.copy_back(stream, dx);
  SB_DNNL_CHECK(stream.wait());
}

void Conv2dKernel::backward_weights(const float* x, const float* dy, float* dw, float* db) {
  dnnl::stream& stream = context_.stream();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, bww_x_.read(stream, x)},
                                             {DNNL_ARG_DIFF_DST, bww_dy_.read(stream, dy)},
                                             {DNNL_ARG_DIFF_WEIGHTS, bww_dw_.target(dw)}};
  if (shape_.bias) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(bias_md_, context_.engine(), db));
  SB_DNNL_CHECK(backward_weights_.execute(stream, args));
  bww_dw_.copy_back(stream, dw);
  SB_DNNL_CHECK(stream.wait());
}

void Conv2dKernel::accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) {
  backward_weights(x, dy, fresh_dw_.data(), shape_.bias ? fresh_db_.data() : nullptr);
  for (std::size_t i = 0; i < fresh_dw_.size(); ++i) dw[i] += fresh_dw_[i];
  if (db == nullptr) return;
  for (std::size_t i = 0; i < fresh_db_.size(); ++i) db[i] += fresh_db_[i];
}

std::unique_ptr<kernels::Conv2dKernel> make_conv2d(CpuContext& context, const kernels::Conv2dShape& shape) {
  return std::make_unique<Conv2dKernel>(context, shape);
}

}  // namespace splitbrain::exec::cpu
