// Concatenation on the local blocks. The rules never split the concatenated dimension (and
// never leave a partial sum), so the inputs' local blocks agree on every other dimension and
// their concatenation along the axis is exactly this rank's block of the output.

#include <utility>

#include "exec/kernels/concat.h"
#include "exec/ops/op_factories.h"

namespace splitbrain::exec::ops {
namespace {

class ConcatOp final : public LayerOp {
 public:
  explicit ConcatOp(std::unique_ptr<kernels::ConcatKernel> kernel) : kernel_(std::move(kernel)) {}

  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    std::vector<const float*> xs;
    for (ConstTensorSpan input : inputs) xs.push_back(input.data());
    kernel_->forward(xs, output.data());
  }

  void backward(int, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    std::vector<float*> dxs;
    for (TensorSpan grad : input_grads) dxs.push_back(grad.data());
    kernel_->backward(output_grad.data(), dxs);
  }

 private:
  std::unique_ptr<kernels::ConcatKernel> kernel_;
};

}  // namespace

std::unique_ptr<LayerOp> make_concat_op(kernels::KernelFactory& factory, const OpContext& op) {
  std::vector<kernels::Dims> input_dims;
  for (const auto& shape : op.input_shapes) input_dims.emplace_back(shape.begin(), shape.end());
  // The model's axis counts per-sample dimensions; local shapes lead with the batch.
  const int axis = static_cast<int>(op.model->layer(op.layer).attr<model::ConcatAttrs>().axis) + 1;
  return std::make_unique<ConcatOp>(factory.make_concat(std::move(input_dims), axis));
}

}  // namespace splitbrain::exec::ops
