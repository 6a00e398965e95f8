// Softmax cross-entropy over the classes of each local row. The step's loss is the mean over
// the global batch, so each rank scales its rows' losses (and their gradients) by 1 / batch.

#include <fmt/format.h>

#include <map>

#include "exec/cpu/ops/op_factories.h"
#include "exec/cpu/softmax_cross_entropy.h"
#include "model/errors.h"

namespace splitbrain::exec::cpu {
namespace {

class LossOp final : public LayerOp {
 public:
  explicit LossOp(const OpContext& op) : op_(op) {
    const auto& x = op.input_shapes[0];
    shape_.rows = x[0];
    shape_.classes = x[1];
  }

  void forward(int micro, int64_t, std::span<const LocalArray* const> inputs, std::span<const LocalArray* const>,
               LocalArray& output) override {
    State& s = states_[micro];
    s.labels = op_.labels(micro, op_.output_offset[0], shape_.rows);
    s.probabilities.resize(inputs[0]->values.size());
    const double sum = softmax_cross_entropy_forward(shape_, inputs[0]->values.data(), s.labels.data(), s.probabilities.data());
    s.loss = sum / static_cast<double>(op_.global_batch);
    std::fill(output.values.begin(), output.values.end(), static_cast<float>(s.loss));
  }

  void backward(int micro, std::span<const LocalArray* const>, const LocalArray&, const LocalArray&,
                std::span<const LocalArray* const>, std::span<LocalArray> input_grads, std::span<LocalArray* const>) override {
    const State& s = states_.at(micro);
    if (input_grads.empty()) return;
    softmax_cross_entropy_backward(shape_, s.probabilities.data(), s.labels.data(),
                                   static_cast<float>(1.0 / static_cast<double>(op_.global_batch)),
                                   input_grads[0].values.data());
  }

  void release(int micro) override { states_.erase(micro); }
  double loss_sum(int micro) const override { return states_.at(micro).loss; }

 private:
  struct State {
    std::vector<int32_t> labels;
    std::vector<float> probabilities;
    double loss = 0.0;
  };

  OpContext op_;
  SoftmaxCrossEntropyShape shape_;
  std::map<int, State> states_;
};

}  // namespace

std::unique_ptr<LayerOp> make_loss_op(const OpContext& op) {
  if (op.input_shapes[0].size() != 2) {
    throw InputError(fmt::format("layer '{}': the executor's loss takes [batch, classes] logits (sequence losses are not supported yet)",
                                 op.model->layer(op.layer).name));
  }
  return std::make_unique<LossOp>(op);
}

}  // namespace splitbrain::exec::cpu
