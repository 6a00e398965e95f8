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

  void forward(int, int64_t, std::span<const LocalArray* const> inputs, std::span<const LocalArray* const>,
               LocalArray& output) override {
    std::vector<const float*> xs;
    for (const LocalArray* input : inputs) xs.push_back(input->values.data());
    kernel_->forward(xs, output.values.data());
  }

  void backward(int, std::span<const LocalArray* const>, const LocalArray&, const LocalArray& output_grad,
                std::span<const LocalArray* const>, std::span<LocalArray> input_grads, std::span<LocalArray* const>) override {
    if (input_grads.empty()) return;
    std::vector<float*> dxs;
    for (LocalArray& grad : input_grads) dxs.push_back(grad.values.data());
    kernel_->backward(output_grad.values.data(), dxs);
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
