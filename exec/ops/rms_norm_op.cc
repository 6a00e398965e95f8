// rms_norm: one kernel call each way. Rows are independent, so a plan's batch or sequence split
// needs no collective inside the layer; each rank keeps its rows' 1/rms per micro-batch.

#include <memory>
#include <utility>

#include "exec/kernels/rms_norm.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"

namespace splitbrain::exec::ops {
namespace {

class RmsNormOp final : public LayerOp {
 public:
  RmsNormOp(std::unique_ptr<kernels::RmsNormKernel> kernel, kernels::KernelFactory& factory)
      : kernel_(std::move(kernel)), inverse_rms_(factory) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const int64_t bytes = kernel_->shape().rows * static_cast<int64_t>(sizeof(float));
    kernel_->forward(inputs[0].data(), params[0].data(), output.data(), inverse_rms_.keep(micro, bytes).as<float>());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    kernel_->backward(inputs[0].data(), output_grad.data(), params[0].data(), inverse_rms_.at(micro).as<float>(),
                      input_grads.empty() ? nullptr : input_grads[0].data(), param_grads[0].data());
  }

  void release(int micro) override { inverse_rms_.release(micro); }
  // The per-position 1/rms kept for backward (model::LayerCost counts them).
  int64_t kept_bytes() const override { return inverse_rms_.bytes(); }

 private:
  std::unique_ptr<kernels::RmsNormKernel> kernel_;
  KeptPerMicroBatch inverse_rms_;
};

}  // namespace

std::unique_ptr<LayerOp> make_rms_norm_op(kernels::KernelFactory& factory, const OpContext& op) {
  const auto& x = op.input_shapes[0];
  kernels::RmsNormShape shape;
  shape.features = x.back();
  shape.rows = comm::element_count(x) / shape.features;
  shape.epsilon = op.model->layer(op.layer).attr<model::RmsNormAttrs>().epsilon;
  return std::make_unique<RmsNormOp>(factory.make_rms_norm(shape), factory);
}

}  // namespace splitbrain::exec::ops
