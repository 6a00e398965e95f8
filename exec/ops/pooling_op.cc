// Max, average and adaptive average pooling on the local [N, C, H, W] block (batch and channel
// splits only: the planner never splits height where windows would straddle ranks).

#include <map>
#include <utility>

#include "exec/kernels/adaptive_avgpool.h"
#include "exec/kernels/pooling.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"

namespace splitbrain::exec::ops {
namespace {

class PoolingOp final : public LayerOp {
 public:
  PoolingOp(kernels::KernelFactory& factory, std::unique_ptr<kernels::Pool2dKernel> kernel)
      : kernel_(std::move(kernel)), workspaces_(factory) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    const auto bytes = static_cast<int64_t>(kernel_->workspace_bytes());
    void* workspace = bytes > 0 ? workspaces_.keep(micro, bytes).data() : nullptr;
    kernel_->forward(inputs[0].data(), output.data(), workspace);
  }

  void backward(int micro, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    const void* workspace = workspaces_.holds(micro) ? workspaces_.at(micro).data() : nullptr;
    kernel_->backward(output_grad.data(), workspace, input_grads[0].data());
  }

  void release(int micro) override { workspaces_.release(micro); }
  int64_t kept_bytes() const override { return workspaces_.bytes(); }

 private:
  std::unique_ptr<kernels::Pool2dKernel> kernel_;
  // Max pooling's record of each window's winner, per micro-batch, where the kernels read it
  // (device memory on a GPU).
  KeptPerMicroBatch workspaces_;
};

class AdaptiveAvgPoolOp final : public LayerOp {
 public:
  explicit AdaptiveAvgPoolOp(std::unique_ptr<kernels::AdaptiveAvgPoolKernel> kernel) : kernel_(std::move(kernel)) {}
  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    kernel_->forward(inputs[0].data(), output.data());
  }
  void backward(int, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (!input_grads.empty()) kernel_->backward(output_grad.data(), input_grads[0].data());
  }

 private:
  std::unique_ptr<kernels::AdaptiveAvgPoolKernel> kernel_;
};

}  // namespace

namespace {

std::unique_ptr<LayerOp> make_window_pooling_op(kernels::KernelFactory& factory, const OpContext& op,
                                                kernels::PoolKind kind) {
  const kernels::Pool2dShape shape = planned_problem<plans::PoolProblem>(op);
  return std::make_unique<PoolingOp>(factory, factory.make_pool2d(kind, shape));
}

}  // namespace

std::unique_ptr<LayerOp> make_maxpool_op(kernels::KernelFactory& factory, const OpContext& op) {
  return make_window_pooling_op(factory, op, kernels::PoolKind::max);
}

std::unique_ptr<LayerOp> make_avgpool_op(kernels::KernelFactory& factory, const OpContext& op) {
  return make_window_pooling_op(factory, op, kernels::PoolKind::average);
}

std::unique_ptr<LayerOp> make_adaptive_avgpool_op(kernels::KernelFactory& factory, const OpContext& op) {
  const auto& x = op.input_shapes[0];
  kernels::AdaptiveAvgPoolShape shape{x[0], x[1], x[2], x[3], op.output_shape[2], op.output_shape[3]};
  return std::make_unique<AdaptiveAvgPoolOp>(factory.make_adaptive_avgpool(shape));
}

}  // namespace splitbrain::exec::ops
