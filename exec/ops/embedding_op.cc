// Embedding lookup on the local block. The token ids arrive as floats (the runtime keeps every
// activation in fp32; ids up to 2^24 are exact). Splitting the batch or the positions splits the
// ids; splitting `out` splits the table's columns (the output's features); splitting `in` splits
// the table's rows (the vocabulary): ids outside this rank's rows give zero rows, so the output
// is a partial sum that the consumer's redistribution sums, as the plan says. A positional table
// looks up the global positions of this rank's block instead of the ids.
//
// The ids are checked on the host, where they come from: a token table's from the data source's
// values of the micro-batch (OpContext::input_values) in each forward, a positional table's once.
// The kernels then read them in the backend's memory, so a GPU's host never reads them back.

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include "exec/kernels/embedding.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/ops/op_factories.h"
#include "exec/ops/op_helpers.h"
#include "model/errors.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec::ops {
namespace {

class EmbeddingOp final : public LayerOp {
 public:
  EmbeddingOp(kernels::KernelFactory& factory, std::unique_ptr<kernels::EmbeddingKernel> kernel, const OpContext& op,
              int64_t positions_local, int64_t first_position)
      : kernel_(std::move(kernel)),
        array_(factory.make_array_kernel()),
        name_(op.model->layer(op.layer).name),
        positional_(op.model->layer(op.layer).attr<model::EmbeddingAttrs>().positional),
        input_values_(op.input_values),
        first_sample_(op.output_offset[0]),
        positions_local_(positions_local),
        first_position_(first_position),
        positions_(op.model->layer(op.model->layer(op.layer).inputs[0]).output_shape.at(0)) {
    const int64_t count = kernel_->shape().count;
    if (!positional_ || count == 0) return;
    std::vector<float> positions(static_cast<size_t>(count));
    kernels::embedding_positions(count / positions_local, positions_local, first_position, positions.data());
    naming_bad_ids([&] { kernels::check_embedding_ids(kernel_->shape(), positions.data()); });
    position_ids_ = factory.make_kept_buffer(count * static_cast<int64_t>(sizeof(float)));
    array_->upload(positions, position_ids_->as<float>());
  }

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    if (!positional_ && kernel_->shape().count > 0) check_token_ids(micro);
    naming_bad_ids([&] { kernel_->forward(ids(inputs[0]), params[0].data(), output.data()); });
  }

  // The ids come again from the saved input (model::LayerCost: an embedding saves its token ids),
  // checked in the forward, or from the block's positions, so the op keeps nothing of its own
  // between the passes.
  void backward(int, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    // Token ids have no gradient: an input gradient, if the runtime asks for one, is zero.
    for (TensorSpan grad : input_grads) array_->fill(grad.data(), static_cast<int64_t>(grad.size()), 0.0f);
    // Adds into the table's gradient, which a tied output head may have added to already.
    naming_bad_ids([&] { kernel_->backward(ids(inputs[0]), output_grad.data(), param_grads[0].data()); });
  }

 private:
  const float* ids(ConstTensorSpan tokens) const {
    if (!positional_) return tokens.data();
    return position_ids_ ? position_ids_->as<float>() : nullptr;  // null: no ids (count 0)
  }

  // This rank's block of the micro-batch's ids, from the data source: its samples, and of each its
  // positions where the sequence is split.
  void check_token_ids(int micro) const {
    const int64_t samples = kernel_->shape().count / positions_local_;
    std::vector<float> ids = input_values_(micro, first_sample_, samples);
    if (static_cast<int64_t>(ids.size()) != samples * positions_) {
      throw std::logic_error(fmt::format("layer '{}': the data gave {} token ids for {} samples of {} positions", name_,
                                         ids.size(), samples, positions_));
    }
    ids = own_positions(std::move(ids), samples, positions_, first_position_, positions_local_);
    naming_bad_ids([&] { kernels::check_embedding_ids(kernel_->shape(), ids.data()); });
  }

  // Bad token data is bad input, not a kernel bug: the kernel names the value, this the layer.
  template <class Pass>
  void naming_bad_ids(Pass pass) const {
    try {
      pass();
    } catch (const kernels::KernelArgumentError& error) {
      throw InputError(fmt::format("layer '{}': {}", name_, error.what()));
    }
  }

  std::unique_ptr<kernels::EmbeddingKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  std::string name_;
  bool positional_;
  std::function<std::vector<float>(int micro, int64_t first, int64_t count)> input_values_;
  int64_t first_sample_;     // of the micro-batch, this rank's first
  int64_t positions_local_;  // per sample, this rank's
  int64_t first_position_;
  int64_t positions_;  // per sample, all
  // A positional table's ids, the block's global positions, in the backend's memory.
  std::unique_ptr<kernels::KeptBuffer> position_ids_;
};

}  // namespace

std::unique_ptr<LayerOp> make_embedding_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::EmbeddingAttrs>();
  const auto& tokens = op.input_shapes[0];  // [N, T] local
  const plans::ParameterShard& table = op.layouts->parameters.at(0);
  const auto table_offset = plans::local_offset(table.layout, *op.mesh, table.global_shape, op.rank);
  const auto& table_shape = op.parameter_shapes.at(0);
  kernels::EmbeddingShape shape;
  shape.count = comm::element_count(tokens);
  shape.dim = table_shape[1];
  shape.num_embeddings = a.num_embeddings;
  shape.row_begin = table_offset[0];
  shape.row_end = table_offset[0] + table_shape[0];
  if (op.output_shape.back() != shape.dim) {
    throw std::logic_error(fmt::format("layer '{}': output width {} differs from the table block's {}", layer.name,
                                       op.output_shape.back(), shape.dim));
  }
  // The output [N, T, D] splits its positions like the ids: its offset is the first position.
  return std::make_unique<EmbeddingOp>(factory, factory.make_embedding(shape), op, tokens.back(), op.output_offset[1]);
}

}  // namespace splitbrain::exec::ops
