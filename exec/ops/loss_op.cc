// Softmax cross-entropy over the classes of each local row. The step's loss is the mean over
// the global batch, so each rank scales its rows' losses (and their gradients) by 1 / batch.
// Sequences ([N, T, classes] logits, one label per position) average each sample over its
// positions first, so the scale is 1 / (batch * positions); with the positions split, this rank
// takes its positions' labels and its loss is its share of the sample's (the plan's partial sum).

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <utility>

#include "exec/kernels/softmax_cross_entropy.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"
#include "model/errors.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec::ops {
namespace {

class LossOp final : public LayerOp {
 public:
  LossOp(kernels::KernelFactory& factory, const OpContext& op)
      : op_(op), probabilities_(factory), labels_(factory), losses_(factory) {
    const auto& x = op.input_shapes[0];
    samples_ = x[0];
    kernels::SoftmaxCrossEntropyShape shape;
    shape.classes = x.back();
    shape.rows = comm::element_count(x) / shape.classes;
    kernel_ = factory.make_softmax_cross_entropy(shape);
    array_ = factory.make_array_kernel();
    if (x.size() == 3) {
      positions_ = op.model->layer(op.model->layer(op.layer).inputs[0]).output_shape[0];
      local_positions_ = x[1];
      // The logits split their positions like the loss's input layout; find where ours start.
      const auto logits_global =
          plans::activation_shape(op.model->layer(op.model->layer(op.layer).inputs[0]), op.output_global_shape[0]);
      first_position_ = plans::local_offset(op.layouts->inputs[0], *op.mesh, logits_global, op.rank)[1];
    }
    scale_ = 1.0 / (static_cast<double>(op.global_batch) * static_cast<double>(positions_));
  }

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    // Checked here, on the host: a GPU kernel reads them in device memory, once uploaded.
    const std::vector<int32_t> labels = local_labels(op_.labels(micro, op_.output_offset[0], samples_));
    kernels::check_labels(kernel_->shape(), labels);
    auto* kept_labels = labels_.keep(micro, static_cast<int64_t>(labels.size() * sizeof(int32_t))).as<int32_t>();
    array_->upload_queued(labels, kept_labels);
    float* probabilities =
        probabilities_.keep(micro, static_cast<int64_t>(inputs[0].size() * sizeof(float))).as<float>();
    auto* loss = losses_.keep(micro, static_cast<int64_t>(sizeof(double))).as<double>();
    kernel_->forward(inputs[0].data(), kept_labels, probabilities, scale_, loss, output);
  }

  void backward(int micro, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    kernel_->backward(probabilities_.at(micro).as<float>(), labels_.at(micro).as<int32_t>(), static_cast<float>(scale_),
                      input_grads[0].data());
  }

  void release(int micro) override {
    losses_.release(micro);
    probabilities_.release(micro);
    labels_.release(micro);
  }
  // The probabilities and labels each micro-batch keeps for its backward.
  int64_t kept_bytes() const override { return probabilities_.bytes() + labels_.bytes(); }
  int64_t kept_model_type_elements() const override {
    return probabilities_.bytes() / static_cast<int64_t>(sizeof(float));
  }
  std::function<double()> download_loss(int micro) override {
    std::shared_ptr<kernels::QueuedDownload> download = array_->download_queued(losses_.at(micro).as<double>());
    return [download] { return download->wait(); };
  }

 private:
  // The source gives one label per sample, or per position of each sample for sequences: keep
  // this rank's positions of each.
  std::vector<int32_t> local_labels(std::vector<int32_t> all) const {
    const auto expected = static_cast<size_t>(samples_ * positions_);
    if (all.size() != expected) {
      throw InputError(
          fmt::format("layer '{}': the data gave {} labels for {} samples, the loss needs {} ({} per sample)",
                      op_.model->layer(op_.layer).name, all.size(), samples_, expected, positions_));
    }
    return own_positions(std::move(all), samples_, positions_, first_position_, local_positions_);
  }

  OpContext op_;
  std::unique_ptr<kernels::SoftmaxCrossEntropyKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  int64_t samples_ = 0;
  int64_t positions_ = 1;  // labels per sample
  int64_t local_positions_ = 1;
  int64_t first_position_ = 0;
  double scale_ = 1.0;  // d(step loss) / d(summed loss)
  KeptPerMicroBatch probabilities_;
  // The labels come with the batch from the data source (host memory); uploaded once per
  // micro-batch where the kernels read them, for the forward and the backward.
  KeptPerMicroBatch labels_;
  // The loss of each micro-batch, scaled, until its download is queued: kept where the kernel
  // writes it (as the step's other values) and not in kept_bytes, as the simulator keeps no
  // 8 bytes for it.
  KeptPerMicroBatch losses_;
};

}  // namespace

std::unique_ptr<LayerOp> make_softmax_cross_entropy_op(kernels::KernelFactory& factory, const OpContext& op) {
  if (op.input_shapes[0].size() != 2 && op.input_shapes[0].size() != 3) {
    throw InputError(
        fmt::format("layer '{}': the executor's loss takes [batch, classes] or [batch, positions, classes] "
                    "logits (other ranks are not supported by the executor yet)",
                    op.model->layer(op.layer).name));
  }
  return std::make_unique<LossOp>(factory, op);
}

}  // namespace splitbrain::exec::ops
