// Batchnorm (training mode) and layernorm. Batchnorm over a batch or height split by the plan
// needs every sample's statistics: its per-channel sums are all-reduced in fp64 over those axes
// (the collectives the plan lists inside the layer, counted like every other), through the
// backend's collective engine. Sums and statistics stay in the backend's memory otherwise.

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "exec/kernels/batchnorm.h"
#include "exec/kernels/layernorm.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"

namespace splitbrain::exec::ops {
namespace {

class BatchNormOp final : public LayerOp {
 public:
  BatchNormOp(kernels::KernelFactory& factory, const kernels::BatchNormShape& shape, const OpContext& op)
      : kernel_(factory.make_batchnorm(shape)),
        array_(factory.make_array_kernel()),
        op_(op),
        epsilon_(op.model->layer(op.layer).attr<model::NormAttrs>().epsilon),
        sums_(factory.make_kept_buffer(2 * shape.channels * static_cast<int64_t>(sizeof(double)))),
        statistics_(factory) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const int64_t c = kernel_->shape().channels;
    double* sums = sums_->as<double>();
    kernel_->local_sums(inputs[0].data(), sums, sums + c);
    const double count = reduce(sums, op_.layouts->forward_internal, "forward");
    float* s = statistics_.keep(micro, 2 * c * static_cast<int64_t>(sizeof(float))).as<float>();
    kernel_->statistics(sums, sums + c, count, epsilon_, s, s + c);
    kernel_->normalize(inputs[0].data(), s, s + c, params[0].data(), params[1].data(), output.data());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const int64_t c = kernel_->shape().channels;
    const float* s = statistics_.at(micro).as<float>();
    double* sums = sums_->as<double>();
    kernel_->backward_local_sums(inputs[0].data(), output_grad.data(), s, s + c, sums, sums + c);
    // Parameter gradients from this rank's samples only: the gradient buckets sum the ranks.
    kernel_->add_parameter_gradients(sums, sums + c, param_grads[0].data(), param_grads[1].data());
    if (!input_grads.empty()) {
      const double count = reduce(sums, op_.layouts->backward_internal, "backward");
      kernel_->backward_data(inputs[0].data(), output_grad.data(), s, s + c, params[0].data(), sums, sums + c, count,
                             input_grads[0].data());
    }
  }

  void release(int micro) override { statistics_.release(micro); }

 private:
  // Sums the 2 x channels `sums` (the backend's memory) over the plan's statistics collective (if
  // any); returns the global count of elements per channel. The engine all-reduces host arrays,
  // so only then do the sums go through the host.
  double reduce(double* sums, const std::vector<plans::Collective>& collectives, const char* phase) {
    double count = static_cast<double>(kernel_->shape().count());
    if (collectives.empty()) return count;
    std::vector<double> values(static_cast<size_t>(2 * kernel_->shape().channels));
    array_->download(sums, values);
    for (const plans::Collective& c : collectives) {
      comm::Communicator& communicator = *op_.communicator;
      communicator.engine().all_reduce_statistics(c.axes, values);
      communicator.count(op_.model->layer(op_.layer).name + "/" + phase, c);
      count *= c.group_size;
    }
    array_->upload(values, sums);
    return count;
  }

  std::unique_ptr<kernels::BatchNormKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  OpContext op_;
  double epsilon_;
  // The per-channel sums of the phase at hand, forward or backward (one array: the phases of the
  // micro-batches run one after another on the backend's queue).
  std::unique_ptr<kernels::KeptBuffer> sums_;
  // Per micro-batch: mean, then inv_std, for its backward. Not in kept_bytes, as the simulator's
  // activation memory leaves them out (8 bytes per channel); nor are the sums.
  KeptPerMicroBatch statistics_;
};

class LayerNormOp final : public LayerOp {
 public:
  LayerNormOp(std::unique_ptr<kernels::LayerNormKernel> kernel, kernels::KernelFactory& factory)
      : kernel_(std::move(kernel)), statistics_(factory) {}
  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    // Each row's mean, then each row's variance.
    const int64_t rows = kernel_->shape().rows;
    auto* s = statistics_.keep(micro, 2 * rows * static_cast<int64_t>(sizeof(float))).as<float>();
    kernel_->forward(inputs[0].data(), params[0].data(), params[1].data(), output.data(), s, s + rows);
  }
  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const float* s = statistics_.at(micro).as<float>();
    kernel_->backward(inputs[0].data(), output_grad.data(), params[0].data(), s, s + kernel_->shape().rows,
                      input_grads.empty() ? nullptr : input_grads[0].data(), param_grads[0].data(),
                      param_grads[1].data());
  }
  void release(int micro) override { statistics_.release(micro); }
  // The per-position statistics kept for the backward (model::LayerCost counts them).
  int64_t kept_bytes() const override { return statistics_.bytes(); }

 private:
  std::unique_ptr<kernels::LayerNormKernel> kernel_;
  KeptPerMicroBatch statistics_;
};

}  // namespace

std::unique_ptr<LayerOp> make_batchnorm_op(kernels::KernelFactory& factory, const OpContext& op) {
  const auto& x = op.input_shapes[0];
  kernels::BatchNormShape shape;
  shape.batch = x[0];
  shape.channels = x[1];
  shape.spatial = x.size() == 4 ? x[2] * x[3] : 1;
  return std::make_unique<BatchNormOp>(factory, shape, op);
}

std::unique_ptr<LayerOp> make_layernorm_op(kernels::KernelFactory& factory, const OpContext& op) {
  const auto& x = op.input_shapes[0];
  kernels::LayerNormShape shape;
  shape.features = x.back();
  shape.rows = comm::element_count(x) / shape.features;
  shape.epsilon = op.model->layer(op.layer).attr<model::NormAttrs>().epsilon;
  return std::make_unique<LayerNormOp>(factory.make_layernorm(shape), factory);
}

}  // namespace splitbrain::exec::ops
