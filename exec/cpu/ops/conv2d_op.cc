// Convolution on the local block: batch and output-channel splits need nothing special; an
// input-channel split leaves partial sums (only the first rank of that group adds the bias).

#include <fmt/format.h>

#include "exec/cpu/conv2d.h"
#include "exec/cpu/ops/op_factories.h"
#include "exec/cpu/ops/op_helpers.h"
#include "model/errors.h"

namespace splitbrain::exec::cpu {
namespace {

class Conv2dOp final : public LayerOp {
 public:
  Conv2dOp(CpuContext& context, const OpContext& op, const Conv2dShape& shape)
      : kernel_(context, shape), bias_(op.adds_bias, shape.out_channels) {}

  void forward(int, int64_t, std::span<const LocalArray* const> inputs, std::span<const LocalArray* const> params,
               LocalArray& output) override {
    const float* bias = nullptr;
    if (kernel_.shape().bias) bias = bias_.pick(*params[1]);
    kernel_.forward(inputs[0]->values.data(), params[0]->values.data(), bias, output.values.data());
  }

  void backward(int, std::span<const LocalArray* const> inputs, const LocalArray&, const LocalArray& output_grad,
                std::span<const LocalArray* const> params, std::span<LocalArray> input_grads,
                std::span<LocalArray* const> param_grads) override {
    const float* dy = output_grad.values.data();
    if (!input_grads.empty()) kernel_.backward_data(dy, params[0]->values.data(), input_grads[0].values.data());
    // The kernel writes fresh gradients; micro-batches accumulate.
    std::vector<float> dw(param_grads[0]->values.size());
    std::vector<float> db(kernel_.shape().bias ? param_grads[1]->values.size() : 0);
    kernel_.backward_weights(inputs[0]->values.data(), dy, dw.data(), db.empty() ? nullptr : db.data());
    add_into(dw, *param_grads[0]);
    if (!db.empty()) add_into(db, *param_grads[1]);
  }

 private:
  Conv2dKernel kernel_;
  BiasSource bias_;
};

}  // namespace

std::unique_ptr<LayerOp> make_conv2d_op(CpuContext& context, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::Conv2dAttrs>();
  if (!op.layouts->forward_internal.empty()) {
    throw InputError(fmt::format("layer '{}': height-split (spatial) convolutions are not supported by the executor yet",
                                 layer.name));
  }
  const auto& x = op.input_shapes[0];
  const auto& w = op.parameter_shapes[0];
  if (a.groups != 1 && w[0] != a.out_channels) {
    throw InputError(fmt::format("layer '{}': grouped convolutions cannot split their output channels in the executor yet",
                                 layer.name));
  }
  Conv2dShape shape;
  shape.batch = x[0];
  shape.in_channels = x[1];
  shape.height = x[2];
  shape.width = x[3];
  shape.out_channels = w[0];
  copy_window(a, shape);
  shape.dilation_h = a.dilation.h;
  shape.dilation_w = a.dilation.w;
  shape.groups = a.groups;
  shape.bias = a.bias;
  return std::make_unique<Conv2dOp>(context, op, shape);
}

}  // namespace splitbrain::exec::cpu
