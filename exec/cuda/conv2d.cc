#include "exec/cuda/conv2d.h"

#include <string>

#include "exec/cuda/conv_algorithms.h"
#include "exec/cuda/cuda_check.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

std::optional<PlanePadding> explicit_padding(const kernels::Conv2dShape& s) {
  if (s.pad_top == s.pad_bottom && s.pad_left == s.pad_right) return std::nullopt;
  return PlanePadding{
      s.batch * s.in_channels,           s.height, s.width, s.pad_top, s.pad_left, s.height + s.pad_top + s.pad_bottom,
      s.width + s.pad_left + s.pad_right};
}

TensorDescriptor input_desc(const kernels::Conv2dShape& s, const std::optional<PlanePadding>& padding) {
  if (padding) return TensorDescriptor(s.batch, s.in_channels, padding->padded_h, padding->padded_w);
  return TensorDescriptor(s.batch, s.in_channels, s.height, s.width);
}

ConvolutionDescriptor conv_desc(const kernels::Conv2dShape& s, bool padded_explicitly, Fp32Math math) {
  return ConvolutionDescriptor(math == Fp32Math::tf32, padded_explicitly ? 0 : s.pad_top,
                               padded_explicitly ? 0 : s.pad_left, s.stride_h, s.stride_w, s.dilation_h, s.dilation_w,
                               s.groups);
}

// Names the convolution as cuDNN runs it, for the algorithm cache: every field that shapes a
// descriptor, the padding as run (explicit padding gives a padded input and no cuDNN padding) and
// the math mode. Not the device: a process's GPUs, and a file's choices, are of one model.
std::string algorithm_key(const kernels::Conv2dShape& s, bool padded_explicitly, Fp32Math math) {
  const int64_t fields[] = {s.batch,
                            s.in_channels,
                            s.height,
                            s.width,
                            s.out_channels,
                            s.kernel_h,
                            s.kernel_w,
                            s.stride_h,
                            s.stride_w,
                            s.pad_top,
                            s.pad_bottom,
                            s.pad_left,
                            s.pad_right,
                            s.dilation_h,
                            s.dilation_w,
                            s.groups,
                            padded_explicitly ? 1 : 0,
                            math == Fp32Math::tf32 ? 1 : 0};
  std::string key;
  for (const int64_t field : fields) key += std::to_string(field) + ",";
  return key;
}

float* floats(const DeviceBuffer& buffer) { return buffer.as<float>(); }

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

Conv2dKernel::Conv2dKernel(CudaContext& context, const kernels::Conv2dShape& shape)
    : context_(context),
      shape_(kernels::checked(shape)),
      explicit_padding_(explicit_padding(shape)),
      input_desc_(input_desc(shape, explicit_padding_)),
      output_desc_(shape.batch, shape.out_channels, shape.out_height(), shape.out_width()),
      bias_desc_(1, shape.out_channels, 1, 1),
      filter_desc_(shape.out_channels, shape.in_channels / shape.groups, shape.kernel_h, shape.kernel_w),
      conv_desc_(conv_desc(shape, explicit_padding_.has_value(), context.fp32_math())),
      graphs_(context) {
  const auto& s = shape_;
  int n = 0, c = 0, h = 0, w = 0;
  SB_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(conv_desc_.get(), input_desc_.get(), filter_desc_.get(), &n, &c, &h, &w));
  if (h != s.out_height() || w != s.out_width())
    throw kernels::KernelArgumentError("Conv2dKernel: cuDNN's output " + std::to_string(h) + "x" + std::to_string(w) +
                                       " differs from the shape's " + std::to_string(s.out_height()) + "x" +
                                       std::to_string(s.out_width()));

  const int64_t input_elements =
      explicit_padding_ ? explicit_padding_->planes * explicit_padding_->padded_h * explicit_padding_->padded_w
                        : s.batch * s.in_channels * s.height * s.width;
  const ConvAlgorithms algorithms = conv_algorithms(
      context,
      {input_desc_.get(), filter_desc_.get(), conv_desc_.get(), output_desc_.get(), float_bytes(input_elements),
       float_bytes(s.out_channels * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w),
       float_bytes(s.batch * s.out_channels * s.out_height() * s.out_width())},
      algorithm_key(s, explicit_padding_.has_value(), context.fp32_math()));
  forward_algo_ = algorithms.forward;
  forward_workspace_bytes_ = algorithms.forward_workspace_bytes;
  backward_data_algo_ = algorithms.backward_data;
  backward_data_workspace_bytes_ = algorithms.backward_data_workspace_bytes;
  backward_filter_algo_ = algorithms.backward_filter;
  backward_filter_workspace_bytes_ = algorithms.backward_filter_workspace_bytes;

  if (explicit_padding_) {
    const PlanePadding& p = *explicit_padding_;
    padded_input_ = DeviceBuffer(float_bytes(p.planes * p.padded_h * p.padded_w));
  }
}

const float* Conv2dKernel::conv_input(const float* x) {
  if (!explicit_padding_) return x;
  pad_planes(context_.stream(), *explicit_padding_, x, 0.0f, floats(padded_input_));
  return floats(padded_input_);
}

void Conv2dKernel::forward(const float* x, const float* w, const float* b, float* y) {
  const bool with_bias = shape_.bias && b != nullptr;
  void* workspace = context_.workspace(forward_workspace_bytes_);
  graphs_.queue(
      {kForwardPass, key_word(x), key_word(w), key_word(with_bias ? b : nullptr), key_word(y), key_word(workspace)},
      [&] {
        const float one = 1.0f, zero = 0.0f;
        const float* input = conv_input(x);
        SB_CUDNN_CHECK(cudnnConvolutionForward(context_.cudnn(), &one, input_desc_.get(), input, filter_desc_.get(), w,
                                               conv_desc_.get(), forward_algo_, workspace, forward_workspace_bytes_,
                                               &zero, output_desc_.get(), y));
        if (with_bias) {
          // y += b broadcast over N, H and W.
          SB_CUDNN_CHECK(cudnnAddTensor(context_.cudnn(), &one, bias_desc_.get(), b, &one, output_desc_.get(), y));
        }
      });
}

void Conv2dKernel::backward_data(const float* dy, const float* w, float* dx) {
  void* workspace = context_.workspace(backward_data_workspace_bytes_);
  graphs_.queue({kBackwardDataPass, key_word(dy), key_word(w), key_word(dx), key_word(workspace)}, [&] {
    const float one = 1.0f, zero = 0.0f;
    // With explicit padding cuDNN's input gradient covers the padded input.
    float* conv_dx = explicit_padding_ ? floats(padded_input_) : dx;
    SB_CUDNN_CHECK(cudnnConvolutionBackwardData(context_.cudnn(), &one, filter_desc_.get(), w, output_desc_.get(), dy,
                                                conv_desc_.get(), backward_data_algo_, workspace,
                                                backward_data_workspace_bytes_, &zero, input_desc_.get(), conv_dx));
    // The gradient that fell on the padding belongs to no input element.
    if (explicit_padding_) crop_planes(context_.stream(), *explicit_padding_, conv_dx, dx);
  });
}

void Conv2dKernel::weight_gradients(const float* x, const float* dy, float beta, float* dw, float* db, bool with_bias) {
  void* workspace = context_.workspace(backward_filter_workspace_bytes_);
  graphs_.queue(
      {kWeightGradientsPass, key_word(x), key_word(dy), key_word(beta), key_word(dw),
       key_word(with_bias ? db : nullptr), key_word(workspace)},
      [&] {
        const float one = 1.0f;
        const float* input = conv_input(x);
        SB_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
            context_.cudnn(), &one, input_desc_.get(), input, output_desc_.get(), dy, conv_desc_.get(),
            backward_filter_algo_, workspace, backward_filter_workspace_bytes_, &beta, filter_desc_.get(), dw));
        if (with_bias)
          SB_CUDNN_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &one, output_desc_.get(), dy, &beta,
                                                      bias_desc_.get(), db));
      });
}

void Conv2dKernel::backward_weights(const float* x, const float* dy, float* dw, float* db) {
  weight_gradients(x, dy, 0.0f, dw, db, shape_.bias);
}

void Conv2dKernel::accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) {
  weight_gradients(x, dy, 1.0f, dw, db, shape_.bias && db != nullptr);
}

std::unique_ptr<kernels::Conv2dKernel> make_conv2d(CudaContext& context, const kernels::Conv2dShape& shape) {
  return std::make_unique<Conv2dKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
