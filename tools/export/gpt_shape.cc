// Reading a GPT-2-style decoder's hyperparameters back from its layer graph, and choosing the
// reader of a decoder's style.

#include "tools/export/gpt_shape.h"

#include <fmt/format.h>

#include <array>

#include "tools/export/decoder_layers.h"
#include "tools/export/llama_shape.h"

namespace splitbrain::tools {
namespace {

using model::OpKind;

constexpr std::string_view kDecoder = "GPT-2-style decoder";

constexpr std::array<OpKind, 5> kEmbeddingPart = {OpKind::input, OpKind::embedding, OpKind::embedding, OpKind::add,
                                                  OpKind::dropout};
constexpr std::array<OpKind, kGptLayersPerBlock> kBlock = {
    OpKind::layernorm, OpKind::linear, OpKind::self_attention, OpKind::linear, OpKind::dropout, OpKind::add,
    OpKind::layernorm, OpKind::linear, OpKind::gelu,           OpKind::linear, OpKind::dropout, OpKind::add};
// Megatron-LM's split of each layer of kBlock: c_attn, attention, c_fc and gelu column-parallel,
// the two c_proj linears row-parallel, the norms, dropouts and residual adds per token.
constexpr std::array<MegatronSplit, kGptLayersPerBlock> kBlockSplits = {
    MegatronSplit::per_token, MegatronSplit::column,    MegatronSplit::column,    MegatronSplit::row,
    MegatronSplit::per_token, MegatronSplit::per_token, MegatronSplit::per_token, MegatronSplit::column,
    MegatronSplit::column,    MegatronSplit::row,       MegatronSplit::per_token, MegatronSplit::per_token};
constexpr std::array<OpKind, 3> kHead = {OpKind::layernorm, OpKind::linear, OpKind::softmax_cross_entropy};

[[noreturn]] void refuse(const model::Model& model, int index, std::string_view expected) {
  refuse_decoder_layer(model, index, kDecoder, expected);
}

}  // namespace

std::string_view decoder_style_name(DecoderStyle style) {
  return style == DecoderStyle::gpt2 ? "GPT-2-style" : "Llama-style";
}

GptShape read_gpt_shape(const model::Model& model) {
  GptShape shape;
  shape.block_splits.assign(kBlockSplits.begin(), kBlockSplits.end());
  expect_layer_kinds(model, 0, kEmbeddingPart, "embedding part", kDecoder);
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
    expect_layer_kinds(model, index, kBlock, fmt::format("block {}", shape.layers), kDecoder);
    const auto& attention = model.layer(index + 2).attr<model::SelfAttentionAttrs>();
    const auto& fc = model.layer(index + 7).attr<model::LinearAttrs>();
    if (shape.layers == 0) {
      shape.heads = attention.heads;
      shape.kv_heads = attention.heads;
      shape.ffn_hidden = fc.out_features;
      shape.attention_dropout = attention.dropout;
      shape.linear_bias = model.layer(index + 1).attr<model::LinearAttrs>().bias;
    } else if (attention.heads != shape.heads || fc.out_features != shape.ffn_hidden) {
      refuse(model, index + 2, "the heads and MLP width of its first block");
    }
    if (!attention.causal) refuse(model, index + 2, "causal self-attention");
    // GPT-2 has no query groups and learned positions, nothing rotated.
    if (attention.kv_head_count() != attention.heads || attention.rope_theta > 0.0) {
      refuse(model, index + 2, "multi-head self-attention without rotary positions");
    }
    shape.block_starts.push_back(index);
    ++shape.layers;
    index += kGptLayersPerBlock;
  }
  if (shape.layers == 0) refuse(model, index, "its first block (layernorm, linear, attention)");
  expect_layer_kinds(model, index, kHead, "final norm and output head", kDecoder);
  if (index + static_cast<int>(kHead.size()) != model.size()) refuse(model, index + 3, "its last layer");
  shape.final_norm = index;
  const auto& head = model.layer(index + 1).attr<model::LinearAttrs>();
  if (head.out_features != shape.vocabulary) refuse(model, index + 1, "an output head over its vocabulary");
  shape.tied_head = !head.tied_to.empty();
  // The input, the position embedding, the embeddings' sum and dropout, and the loss.
  shape.outer_per_token_layers = {0, 2, 3, 4, shape.final_norm + 2};
  return shape;
}

GptShape read_decoder_shape(const model::Model& model) {
  const bool position_table = model.size() > 2 && model.layer(2).kind == OpKind::embedding;
  const bool llama_start =
      model.size() > 2 && model.layer(1).kind == OpKind::embedding && model.layer(2).kind == OpKind::rms_norm;
  return !position_table && llama_start ? read_llama_shape(model) : read_gpt_shape(model);
}

}  // namespace splitbrain::tools
