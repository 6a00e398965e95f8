// Embedding lookup on the local block. The token ids arrive as floats (the runtime keeps every
// activation in fp32; ids up to 2^24 are exact). Splitting the batch or the positions splits the
// ids; splitting `out` splits the table's columns (the output's features); splitting `in` splits
// the table's rows (the vocabulary): ids outside this rank's rows give zero rows, so the output
// is a partial sum that the consumer's redistribution sums, as the plan says. A positional table
// looks up the global positions of this rank's block instead of the ids.

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include "exec/kernels/embedding.h"
#include "exec/ops/op_factories.h"
#include "model/errors.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec::ops {
namespace {

class EmbeddingOp final : public LayerOp {
 public:
  EmbeddingOp(std::unique_ptr<kernels::EmbeddingKernel> kernel, const OpContext& op, int64_t positions_local,
              int64_t first_position)
      : kernel_(std::move(kernel)), name_(op.model->layer(op.layer).name), positions_local_(positions_local),
        first_position_(first_position), positional_(op.model->layer(op.layer).attr<model::EmbeddingAttrs>().positional) {}

  void forward(int, int64_t, std::span<const LocalArray* const> inputs, std::span<const LocalArray* const> params,
               LocalArray& output) override {
    const std::vector<int32_t> ids = positional_ ? positions() : token_ids(*inputs[0]);
    kernel_->forward(ids.data(), params[0]->values.data(), output.values.data());
  }

  // The ids come again from the saved input (model::LayerCost: an embedding saves its token ids),
  // or from the block's positions, so the op keeps nothing of its own between the passes.
  void backward(int, std::span<const LocalArray* const> inputs, const LocalArray&, const LocalArray& output_grad,
                std::span<const LocalArray* const>, std::span<LocalArray> input_grads,
                std::span<LocalArray* const> param_grads) override {
    // Token ids have no gradient: an input gradient, if the runtime asks for one, is zero.
    for (LocalArray& grad : input_grads) std::fill(grad.values.begin(), grad.values.end(), 0.0f);
    // Adds into the table's gradient, which a tied output head may have added to already.
    const std::vector<int32_t> ids = positional_ ? positions() : token_ids(*inputs[0]);
    kernel_->backward(ids.data(), output_grad.values.data(), param_grads[0]->values.data());
  }

 private:
  std::vector<int32_t> positions() const {
    const int64_t count = kernel_->shape().count;
    std::vector<int32_t> ids(static_cast<size_t>(count));
    kernels::embedding_positions(count / positions_local_, positions_local_, first_position_, ids.data());
    return ids;
  }

  // Bad token data is bad input, not a kernel bug: name the layer and the offending value.
  std::vector<int32_t> token_ids(const LocalArray& tokens) const {
    const int64_t num_embeddings = kernel_->shape().num_embeddings;
    std::vector<int32_t> ids(tokens.values.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const float id = tokens.values[i];
      if (!(id >= 0.0f) || id >= static_cast<float>(num_embeddings) || std::floor(id) != id) {
        throw InputError(fmt::format("layer '{}': token id {} at local position {} is not an integer in [0, {})", name_,
                                     id, i, num_embeddings));
      }
      ids[i] = static_cast<int32_t>(id);
    }
    return ids;
  }

  std::unique_ptr<kernels::EmbeddingKernel> kernel_;
  std::string name_;
  int64_t positions_local_;
  int64_t first_position_;
  bool positional_;
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
  return std::make_unique<EmbeddingOp>(factory.make_embedding(shape), op, tokens.back(), op.output_offset[1]);
}

}  // namespace splitbrain::exec::ops
