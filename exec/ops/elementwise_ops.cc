// Element-wise layers: relu and gelu, dropout (a mask that depends only on the
// element's place in the global batch), flatten (same values, new shape), add.

#include <utility>

#include "exec/kernels/dropout.h"
#include "exec/kernels/elementwise_add.h"
#include "exec/kernels/eltwise.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"

namespace splitbrain::exec::ops {
namespace {

class ActivationOp final : public LayerOp {
 public:
  explicit ActivationOp(std::unique_ptr<kernels::ActivationKernel> kernel) : kernel_(std::move(kernel)) {}
  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    kernel_->forward(inputs[0].data(), output.data());
  }
  void backward(int, std::span<const ConstTensorSpan> inputs, ConstTensorSpan output, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    // relu's gradient is read from its output (it may run in place); gelu's from its input.
    const float* saved = kernel_->kind() == kernels::Activation::relu ? output.data() : inputs[0].data();
    kernel_->backward(saved, output_grad.data(), input_grads[0].data());
  }

 private:
  std::unique_ptr<kernels::ActivationKernel> kernel_;
};

class DropoutOp final : public LayerOp {
 public:
  DropoutOp(kernels::KernelFactory& factory, double probability, const OpContext& op)
      : kernel_(factory.make_dropout(probability)),
        array_(factory.make_array_kernel()),
        masks_(factory),
        layer_(static_cast<uint64_t>(op.layer)),
        seed_(op.seed),
        block_{op.output_global_shape, op.output_offset, op.output_shape},
        micro_batch_(op.output_global_shape[0]) {
    // Masks are drawn over the whole step's batch, so micro-batching does not change them.
    block_.global_shape[0] = op.global_batch;
  }
  void forward(int micro, int64_t step, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    if (!training_) {
      // The identity: nothing to keep, and a backward (if any) passes the gradient through.
      masks_.release(micro);
      array_->copy(inputs[0].data(), output.data(), static_cast<int64_t>(output.size()));
      return;
    }
    kernels::DropoutBlock block = block_;
    block.offset[0] += micro * micro_batch_;
    kernels::KeptBuffer& mask = masks_.keep(micro, static_cast<int64_t>(inputs[0].size()));  // a byte per element
    kernel_->forward(kernels::DropoutKey{seed_, static_cast<uint64_t>(step), layer_}, block, inputs[0].data(),
                     output.data(), mask.as<uint8_t>());
  }
  void backward(int micro, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    const auto elements = static_cast<int64_t>(output_grad.size());
    if (!masks_.holds(micro)) {
      array_->copy(output_grad.data(), input_grads[0].data(), elements);
      return;
    }
    kernel_->backward(elements, masks_.at(micro).as<uint8_t>(), output_grad.data(), input_grads[0].data());
  }
  void release(int micro) override { masks_.release(micro); }
  void set_training(bool training) override { training_ = training; }
  int64_t kept_bytes() const override { return masks_.bytes(); }

 private:
  std::unique_ptr<kernels::DropoutKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  KeptPerMicroBatch masks_;
  bool training_ = true;
  uint64_t layer_;
  uint64_t seed_;
  kernels::DropoutBlock block_;
  int64_t micro_batch_;
};

class ReshapeOp final : public LayerOp {
 public:
  explicit ReshapeOp(std::unique_ptr<kernels::ArrayKernel> array) : array_(std::move(array)) {}
  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    array_->copy(inputs[0].data(), output.data(), static_cast<int64_t>(output.size()));
  }
  void backward(int, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (!input_grads.empty())
      array_->copy(output_grad.data(), input_grads[0].data(), static_cast<int64_t>(output_grad.size()));
  }

 private:
  std::unique_ptr<kernels::ArrayKernel> array_;
};

class AddOp final : public LayerOp {
 public:
  AddOp(std::unique_ptr<kernels::AddKernel> kernel, std::unique_ptr<kernels::ArrayKernel> array)
      : kernel_(std::move(kernel)), array_(std::move(array)) {}
  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    std::vector<const float*> xs;
    for (ConstTensorSpan input : inputs) xs.push_back(input.data());
    kernel_->forward(xs, output.data());
  }
  void backward(int, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    // The sum passes its gradient on to each input.
    for (TensorSpan grad : input_grads)
      array_->copy(output_grad.data(), grad.data(), static_cast<int64_t>(grad.size()));
  }

 private:
  std::unique_ptr<kernels::AddKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
};

int64_t elements_of(const std::vector<int64_t>& shape) { return comm::element_count(shape); }

}  // namespace

std::unique_ptr<LayerOp> make_relu_op(kernels::KernelFactory& factory, const OpContext& op) {
  return std::make_unique<ActivationOp>(
      factory.make_activation(kernels::Activation::relu, elements_of(op.output_shape)));
}

std::unique_ptr<LayerOp> make_gelu_op(kernels::KernelFactory& factory, const OpContext& op) {
  return std::make_unique<ActivationOp>(
      factory.make_activation(kernels::Activation::gelu_tanh, elements_of(op.output_shape)));
}

std::unique_ptr<LayerOp> make_dropout_op(kernels::KernelFactory& factory, const OpContext& op) {
  const double probability = op.model->layer(op.layer).attr<model::DropoutAttrs>().probability;
  return std::make_unique<DropoutOp>(factory, probability, op);
}

std::unique_ptr<LayerOp> make_flatten_op(kernels::KernelFactory& factory, const OpContext&) {
  return std::make_unique<ReshapeOp>(factory.make_array_kernel());
}

std::unique_ptr<LayerOp> make_add_op(kernels::KernelFactory& factory, const OpContext& op) {
  return std::make_unique<AddOp>(
      factory.make_add(static_cast<int>(op.input_shapes.size()), elements_of(op.output_shape)),
      factory.make_array_kernel());
}

}  // namespace splitbrain::exec::ops
