// y = x W^T + b over the last dimension of the local block. Splitting the output features
// splits W's rows; splitting the contraction splits its columns and leaves partial sums (the
// bias is added by the first rank of that group only). A linear tied to an embedding (GPT's
// output head) gets the embedding's table block as its weight and adds its weight gradient into
// the table's (the runtime passes them first: exec/runtime/tied_parameters.h).

#include <utility>

#include "exec/kernels/linear.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"

namespace splitbrain::exec::ops {
namespace {

class LinearOp final : public LayerOp {
 public:
  LinearOp(std::unique_ptr<kernels::LinearKernel> kernel, const OpContext& op, bool has_bias_parameter)
      : kernel_(std::move(kernel)), has_bias_(has_bias_parameter), adds_bias_(op.adds_bias) {}

  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const float* bias = nullptr;
    if (has_bias_) bias = bias_to_add(adds_bias_, params[bias_index()]);
    kernel_->forward(inputs[0].data(), params[0].data(), bias, output.data());
  }

  void backward(int, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const float* dy = output_grad.data();
    if (!input_grads.empty()) kernel_->backward_data(dy, params[0].data(), input_grads[0].data());
    kernel_->accumulate_weight_gradients(inputs[0].data(), dy, param_grads[0].data(),
                                         has_bias_ ? param_grads[bias_index()].data() : nullptr);
  }

 private:
  static size_t bias_index() { return 1; }
  std::unique_ptr<kernels::LinearKernel> kernel_;
  bool has_bias_;
  bool adds_bias_;
};

}  // namespace

std::unique_ptr<LayerOp> make_linear_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::LinearAttrs>();
  const auto& x = op.input_shapes[0];
  kernels::LinearShape shape;
  shape.rows = 1;
  for (size_t d = 0; d + 1 < x.size(); ++d) shape.rows *= x[d];
  shape.in_features = x.back();
  shape.out_features = op.output_shape.back();
  shape.bias = a.bias;
  return std::make_unique<LinearOp>(factory.make_linear(shape), op, a.bias);
}

}  // namespace splitbrain::exec::ops
