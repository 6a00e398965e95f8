// Convolution on the local block: batch and output-channel splits need nothing special; an
// input-channel split leaves partial sums (only the first rank of that group adds the bias); a
// height split computes on the block extended by its neighbours' boundary rows (the plan's halo
// exchange) and sends those rows' gradients back in backward.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "exec/kernels/conv2d.h"
#include "exec/ops/halo_in_backend.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {
namespace {

class Conv2dOp final : public LayerOp {
 public:
  Conv2dOp(kernels::KernelFactory& factory, const kernels::Conv2dShape& shape, const OpContext& op)
      : kernel_(factory.make_conv2d(shape)), factory_(factory), op_(op), extended_(factory) {
    if (!op.layouts->forward_internal.empty()) {
      halo_.emplace(factory, *op.communicator, op.layouts->forward_internal.front(), op.input_shapes[0]);
    }
  }

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const float* bias = nullptr;
    if (kernel_->shape().bias) bias = bias_to_add(op_.adds_bias, params[1]);
    const float* x = inputs[0].data();
    if (halo_) {
      float* kept = extended_.keep(micro, halo_->extended_elements() * static_cast<int64_t>(sizeof(float))).as<float>();
      halo_->extend(x, kept, label("forward"));
      x = kept;
    }
    kernel_->forward(x, params[0].data(), bias, output.data());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const float* dy = output_grad.data();
    const float* x = halo_ ? extended_.at(micro).as<float>() : inputs[0].data();
    if (!input_grads.empty()) {
      if (halo_) {
        const auto extended_grad =
            factory_.make_kept_buffer(halo_->extended_elements() * static_cast<int64_t>(sizeof(float)));
        kernel_->backward_data(dy, params[0].data(), extended_grad->as<float>());
        halo_->reduce(extended_grad->as<float>(), input_grads[0].data(), label("backward"));
      } else {
        kernel_->backward_data(dy, params[0].data(), input_grads[0].data());
      }
    }
    kernel_->accumulate_weight_gradients(x, dy, param_grads[0].data(),
                                         kernel_->shape().bias ? param_grads[1].data() : nullptr);
  }

  void release(int micro) override { extended_.release(micro); }

 private:
  std::string label(const char* phase) const { return op_.model->layer(op_.layer).name + "/" + phase; }

  std::unique_ptr<kernels::Conv2dKernel> kernel_;
  kernels::KernelFactory& factory_;
  OpContext op_;
  std::optional<HaloInBackend> halo_;  // the height split's halo exchange, when there is one
  KeptPerMicroBatch extended_;         // the halo-extended input per micro-batch, in the backend's memory
};

}  // namespace

std::unique_ptr<LayerOp> make_conv2d_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::Conv2dAttrs>();
  const auto& w = op.parameter_shapes[0];
  if (a.groups != 1 && w[0] != a.out_channels) {
    throw InputError(fmt::format(
        "layer '{}': grouped convolutions cannot split their output channels in the executor yet", layer.name));
  }
  // The plan's problem, the one the simulator prices: a height split's block extended by its halo
  // rows (zeros at the tensor's edges), padded then only at the sides.
  return std::make_unique<Conv2dOp>(factory, planned_problem<plans::ConvProblem>(op), op);
}

}  // namespace splitbrain::exec::ops
