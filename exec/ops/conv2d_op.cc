// Convolution on the local block: batch and output-channel splits need nothing special; an
// input-channel split leaves partial sums (only the first rank of that group adds the bias); a
// height split computes on the block extended by its neighbours' boundary rows (the plan's halo
// exchange) and sends those rows' gradients back in backward.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "exec/comm/halo_rows.h"
#include "exec/kernels/conv2d.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {
namespace {

class Conv2dOp final : public LayerOp {
 public:
  Conv2dOp(std::unique_ptr<kernels::Conv2dKernel> kernel, const OpContext& op)
      : kernel_(std::move(kernel)), op_(op) {
    if (!op.layouts->forward_internal.empty()) halo_ = op.layouts->forward_internal.front();
  }

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const float* bias = nullptr;
    if (kernel_->shape().bias) bias = bias_to_add(op_.adds_bias, params[1]);
    const float* x = inputs[0].data();
    if (halo_) {
      const comm::LocalArray block{op_.input_shapes[0], {inputs[0].begin(), inputs[0].end()}};
      extended_[micro] = op_.communicator->run(*halo_, block, label("forward"));
      x = extended_[micro].values.data();
    }
    kernel_->forward(x, params[0].data(), bias, output.data());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const float* dy = output_grad.data();
    const float* x = halo_ ? extended_.at(micro).values.data() : inputs[0].data();
    if (!input_grads.empty()) {
      if (halo_) {
        const comm::LocalArray& extended = extended_.at(micro);
        comm::LocalArray extended_grad{extended.shape, std::vector<float>(extended.values.size())};
        kernel_->backward_data(dy, params[0].data(), extended_grad.values.data());
        const comm::LocalArray grad = comm::halo_reduce(*op_.communicator, *halo_, extended_grad, label("backward"));
        std::copy(grad.values.begin(), grad.values.end(), input_grads[0].begin());
      } else {
        kernel_->backward_data(dy, params[0].data(), input_grads[0].data());
      }
    }
    kernel_->accumulate_weight_gradients(x, dy, param_grads[0].data(),
                                        kernel_->shape().bias ? param_grads[1].data() : nullptr);
  }

  void release(int micro) override { extended_.erase(micro); }

 private:
  std::string label(const char* phase) const { return op_.model->layer(op_.layer).name + "/" + phase; }

  std::unique_ptr<kernels::Conv2dKernel> kernel_;
  OpContext op_;
  std::optional<plans::Collective> halo_;  // the height split's halo exchange, when there is one
  // The halo-extended input, per micro-batch. The halo exchange runs on host arrays through the
  // Communicator, so a height split reads and writes the op's tensors as host memory (both
  // backends' arrays are, today: exec/cuda/README.md).
  std::map<int, comm::LocalArray> extended_;
};

}  // namespace

std::unique_ptr<LayerOp> make_conv2d_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::Conv2dAttrs>();
  const auto& x = op.input_shapes[0];
  const auto& w = op.parameter_shapes[0];
  if (a.groups != 1 && w[0] != a.out_channels) {
    throw InputError(fmt::format("layer '{}': grouped convolutions cannot split their output channels in the executor yet",
                                 layer.name));
  }
  kernels::Conv2dShape shape;
  shape.batch = x[0];
  shape.in_channels = x[1];
  // A height split receives halo rows from its neighbours (zeros at the tensor's edges), so the
  // kernel sees the extended block and pads only the width.
  const int64_t halo_rows = op.layouts->forward_internal.empty() ? 0 : op.layouts->forward_internal.front().halo_rows;
  shape.height = x[2] + 2 * halo_rows;
  shape.width = x[3];
  shape.out_channels = w[0];
  copy_window(a, shape);
  if (halo_rows > 0) shape.pad_top = shape.pad_bottom = 0;
  shape.dilation_h = a.dilation.h;
  shape.dilation_w = a.dilation.w;
  shape.groups = a.groups;
  shape.bias = a.bias;
  return std::make_unique<Conv2dOp>(factory.make_conv2d(shape), op);
}

}  // namespace splitbrain::exec::ops
