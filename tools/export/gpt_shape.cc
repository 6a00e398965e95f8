// Reading a GPT's hyperparameters back from its layer graph.

#include "tools/export/gpt_shape.h"

#include <fmt/format.h>

#include <array>

#include "tools/export/export_refusal.h"

namespace splitbrain::tools {
namespace {

using model::OpKind;

constexpr std::array<OpKind, 5> kEmbeddingPart = {OpKind::input, OpKind::embedding, OpKind::embedding, OpKind::add,
                                                  OpKind::dropout};
constexpr std::array<OpKind, kGptLayersPerBlock> kBlock = {
    OpKind::layernorm, OpKind::linear, OpKind::self_attention, OpKind::linear, OpKind::dropout, OpKind::add,
    OpKind::layernorm, OpKind::linear, OpKind::gelu,           OpKind::linear, OpKind::dropout, OpKind::add};
constexpr std::array<OpKind, 3> kHead = {OpKind::layernorm, OpKind::linear, OpKind::softmax_cross_entropy};

[[noreturn]] void refuse(const model::Model& model, int index, std::string_view expected) {
  if (index >= model.size()) {
    throw ExportRefusal(
        fmt::format("model '{}': ends after {} layers, where a GPT-2-style decoder has {}; only such "
                    "decoders export to this trainer",
                    model.name(), model.size(), expected));
  }
  throw ExportRefusal(
      fmt::format("model '{}': layer '{}' ({}) stands where a GPT-2-style decoder has {}; only such "
                  "decoders export to this trainer",
                  model.name(), model.layer(index).name, model::op_name(model.layer(index).kind), expected));
}

template <size_t N>
void expect_kinds(const model::Model& model, int first, const std::array<OpKind, N>& kinds, std::string_view part) {
  for (size_t k = 0; k < N; ++k) {
    const int index = first + static_cast<int>(k);
    if (index >= model.size() || model.layer(index).kind != kinds[k]) {
      refuse(model, index, fmt::format("a '{}' layer (number {} of its {})", model::op_name(kinds[k]), k + 1, part));
    }
  }
}

}  // namespace

GptShape read_gpt_shape(const model::Model& model) {
  GptShape shape;
  expect_kinds(model, 0, kEmbeddingPart, "embedding part");
  const auto& tokens = model.layer(0);
  const auto& table = model.layer(1).attr<model::EmbeddingAttrs>();
  const auto& position_table = model.layer(2).attr<model::EmbeddingAttrs>();
  if (!tokens.output_is_tokens || tokens.output_shape.size() != 1) refuse(model, 0, "a token input of one sequence");
  if (table.positional) refuse(model, 1, "its token embedding");
  if (!position_table.positional) refuse(model, 2, "its position embedding");
  shape.sequence = tokens.output_shape[0];
  shape.vocabulary = table.num_embeddings;
  shape.hidden = table.embedding_dim;
  shape.positions = position_table.num_embeddings;
  shape.hidden_dropout = model.layer(4).attr<model::DropoutAttrs>().probability;

  int index = static_cast<int>(kEmbeddingPart.size());
  while (index < model.size() && model.layer(index).kind == OpKind::layernorm && index + 1 < model.size() &&
         model.layer(index + 1).kind == OpKind::linear && model.layer(index + 1).consumers.size() == 1 &&
         model.layer(model.layer(index + 1).consumers[0]).kind == OpKind::self_attention) {
    expect_kinds(model, index, kBlock, fmt::format("block {}", shape.layers));
    const auto& attention = model.layer(index + 2).attr<model::SelfAttentionAttrs>();
    const auto& fc = model.layer(index + 7).attr<model::LinearAttrs>();
    if (shape.layers == 0) {
      shape.heads = attention.heads;
      shape.ffn_hidden = fc.out_features;
      shape.attention_dropout = attention.dropout;
      shape.linear_bias = model.layer(index + 1).attr<model::LinearAttrs>().bias;
    } else if (attention.heads != shape.heads || fc.out_features != shape.ffn_hidden) {
      refuse(model, index + 2, "the heads and MLP width of its first block");
    }
    if (!attention.causal) refuse(model, index + 2, "causal self-attention");
    // The exports write GPT-2's flags: no query groups and learned positions, nothing rotated.
    if (attention.kv_head_count() != attention.heads || attention.rope_theta > 0.0) {
      refuse(model, index + 2, "multi-head self-attention without rotary positions");
    }
    shape.block_starts.push_back(index);
    ++shape.layers;
    index += kGptLayersPerBlock;
  }
  if (shape.layers == 0) refuse(model, index, "its first block (layernorm, linear, attention)");
  expect_kinds(model, index, kHead, "final norm and output head");
  if (index + static_cast<int>(kHead.size()) != model.size()) refuse(model, index + 3, "its last layer");
  shape.final_norm = index;
  const auto& head = model.layer(index + 1).attr<model::LinearAttrs>();
  if (head.out_features != shape.vocabulary) refuse(model, index + 1, "an output head over its vocabulary");
  shape.tied_head = !head.tied_to.empty();
  return shape;
}

}  // namespace splitbrain::tools
