// swiglu: one kernel call each way. Backward reads the gate and up projections the step keeps as
// the layer's saved inputs, so the op itself keeps nothing; elements are independent, so every
// split a plan gives it runs without a collective inside the layer.

#include <memory>
#include <utility>

#include "exec/kernels/swiglu.h"
#include "exec/ops/op_factories.h"

namespace splitbrain::exec::ops {
namespace {

class SwigluOp final : public LayerOp {
 public:
  explicit SwigluOp(std::unique_ptr<kernels::SwigluKernel> kernel) : kernel_(std::move(kernel)) {}

  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    kernel_->forward(inputs[0].data(), inputs[1].data(), output.data());
  }

  void backward(int, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;  // nothing upstream has parameters
    kernel_->backward(inputs[0].data(), inputs[1].data(), output_grad.data(), input_grads[0].data(),
                      input_grads[1].data());
  }

 private:
  std::unique_ptr<kernels::SwigluKernel> kernel_;
};

}  // namespace

std::unique_ptr<LayerOp> make_swiglu_op(kernels::KernelFactory& factory, const OpContext& op) {
  return std::make_unique<SwigluOp>(factory.make_swiglu(comm::element_count(op.output_shape)));
}

}  // namespace splitbrain::exec::ops
