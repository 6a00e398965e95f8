// Reading a Llama-style decoder's hyperparameters back from its layer graph.

#include "tools/export/llama_shape.h"

#include <fmt/format.h>

#include <array>

#include "tools/export/decoder_layers.h"

namespace splitbrain::tools {
namespace {

using model::OpKind;

constexpr std::string_view kDecoder = "Llama-style decoder";

constexpr std::array<OpKind, 2> kEmbeddingPart = {OpKind::input, OpKind::embedding};
constexpr std::array<OpKind, kLlamaLayersPerBlock> kBlock = {
    OpKind::rms_norm, OpKind::linear, OpKind::self_attention, OpKind::linear, OpKind::add, OpKind::rms_norm,
    OpKind::linear,   OpKind::linear, OpKind::swiglu,         OpKind::linear, OpKind::add};
// Megatron-LM's split of each layer of kBlock: wqkv and the attention column-parallel, wo
// row-parallel; the gate and up linears and swiglu column-parallel (its fused fc1 holds both
// halves, each rank its share of each), the down linear row-parallel; norms and adds per token.
constexpr std::array<MegatronSplit, kLlamaLayersPerBlock> kBlockSplits = {
    MegatronSplit::per_token, MegatronSplit::column,    MegatronSplit::column,   MegatronSplit::row,
    MegatronSplit::per_token, MegatronSplit::per_token, MegatronSplit::column,   MegatronSplit::column,
    MegatronSplit::column,    MegatronSplit::row,       MegatronSplit::per_token};
constexpr std::array<OpKind, 3> kHead = {OpKind::rms_norm, OpKind::linear, OpKind::softmax_cross_entropy};

// Offsets within kBlock.
constexpr int kAttentionNorm = 0, kQkv = 1, kAttention = 2, kAttentionOut = 3, kMlpNorm = 5, kGate = 6, kUp = 7,
              kSwiglu = 8, kDown = 9;

[[noreturn]] void refuse(const model::Model& model, int index, std::string_view expected) {
  refuse_decoder_layer(model, index, kDecoder, expected);
}

const model::LinearAttrs& linear(const model::Model& model, int index) {
  return model.layer(index).attr<model::LinearAttrs>();
}

void expect_norm_epsilon(const model::Model& model, int index, const GptShape& shape) {
  if (model.layer(index).attr<model::RmsNormAttrs>().epsilon != shape.norm_epsilon) {
    refuse(model, index, fmt::format("an RMSNorm of the first one's epsilon ({})", shape.norm_epsilon));
  }
}

// The block starting at `start` against the first one (or, for the first, its widths read).
void read_block(const model::Model& model, int start, GptShape& shape) {
  expect_layer_kinds(model, start, kBlock, fmt::format("block {}", shape.layers), kDecoder);
  const auto& attention = model.layer(start + kAttention).attr<model::SelfAttentionAttrs>();
  if (shape.layers == 0) {
    if (attention.heads <= 0 || shape.hidden % attention.heads != 0) {
      refuse(model, start + kAttention, fmt::format("heads dividing its width {}", shape.hidden));
    }
    shape.heads = attention.heads;
    shape.kv_heads = attention.kv_head_count();
    shape.rope_theta = attention.rope_theta;
    shape.attention_dropout = attention.dropout;
    shape.ffn_hidden = linear(model, start + kGate).out_features;
    shape.linear_bias = linear(model, start + kQkv).bias;
    shape.norm_epsilon = model.layer(start + kAttentionNorm).attr<model::RmsNormAttrs>().epsilon;
  } else if (attention.heads != shape.heads || attention.kv_head_count() != shape.kv_heads ||
             attention.rope_theta != shape.rope_theta || attention.dropout != shape.attention_dropout) {
    refuse(model, start + kAttention, "the heads, key/value heads, rotary base and dropout of its first block");
  }
  if (!attention.causal) refuse(model, start + kAttention, "causal self-attention");
  // Megatron-LM's heads are hidden / heads wide (--kv-channels is not written).
  const int64_t head_dim = shape.hidden / shape.heads;
  if (linear(model, start + kQkv).out_features != (shape.heads + 2 * shape.kv_heads) * head_dim) {
    refuse(model, start + kQkv,
           fmt::format("q|k|v of {} + 2 x {} heads {} wide", shape.heads, shape.kv_heads, head_dim));
  }
  for (int offset : {kAttentionOut, kDown}) {
    if (linear(model, start + offset).out_features != shape.hidden) {
      refuse(model, start + offset, fmt::format("an output projection back to its width {}", shape.hidden));
    }
  }
  for (int offset : {kGate, kUp}) {
    const model::Layer& layer = model.layer(start + offset);
    if (layer.attr<model::LinearAttrs>().out_features != shape.ffn_hidden ||
        layer.inputs != std::vector<int>{start + kMlpNorm}) {
      refuse(model, start + offset,
             fmt::format("a linear from the MLP's norm {} wide (the first block's width)", shape.ffn_hidden));
    }
  }
  // swiglu(gate, up) = silu(gate) * up, as Megatron-LM's gated fc1 computes silu(first half) * second half.
  if (model.layer(start + kSwiglu).inputs != std::vector<int>{start + kGate, start + kUp}) {
    refuse(model, start + kSwiglu, "swiglu of the gate and up linears before it, in that order");
  }
  for (int offset : {kQkv, kAttentionOut, kGate, kUp, kDown}) {
    if (linear(model, start + offset).bias != shape.linear_bias) {
      refuse(model, start + offset,
             fmt::format("a linear {} bias, as its first", shape.linear_bias ? "with" : "without"));
    }
  }
  expect_norm_epsilon(model, start + kAttentionNorm, shape);
  expect_norm_epsilon(model, start + kMlpNorm, shape);
}

}  // namespace

GptShape read_llama_shape(const model::Model& model) {
  GptShape shape;
  shape.style = DecoderStyle::llama;
  shape.rms_norm = true;
  shape.swiglu = true;
  shape.block_splits.assign(kBlockSplits.begin(), kBlockSplits.end());
  expect_layer_kinds(model, 0, kEmbeddingPart, "embedding part", kDecoder);
  const auto& tokens = model.layer(0);
  const auto& table = model.layer(1).attr<model::EmbeddingAttrs>();
  if (!tokens.output_is_tokens || tokens.output_shape.size() != 1) refuse(model, 0, "a token input of one sequence");
  if (table.positional) refuse(model, 1, "its token embedding");
  shape.sequence = tokens.output_shape[0];
  shape.vocabulary = table.num_embeddings;
  shape.hidden = table.embedding_dim;

  int index = static_cast<int>(kEmbeddingPart.size());
  while (index + 1 < model.size() && model.layer(index).kind == OpKind::rms_norm &&
         model.layer(index + 1).kind == OpKind::linear && model.layer(index + 1).consumers.size() == 1 &&
         model.layer(model.layer(index + 1).consumers[0]).kind == OpKind::self_attention) {
    read_block(model, index, shape);
    shape.block_starts.push_back(index);
    ++shape.layers;
    index += kLlamaLayersPerBlock;
  }
  if (shape.layers == 0) refuse(model, index, "its first block (rms_norm, linear, attention)");
  expect_layer_kinds(model, index, kHead, "final norm and output head", kDecoder);
  if (index + static_cast<int>(kHead.size()) != model.size()) refuse(model, index + 3, "its last layer");
  shape.final_norm = index;
  expect_norm_epsilon(model, index, shape);
  const auto& head = linear(model, index + 1);
  if (head.out_features != shape.vocabulary) refuse(model, index + 1, "an output head over its vocabulary");
  shape.tied_head = !head.tied_to.empty();
  // The input and the loss; Llama has no position table.
  shape.outer_per_token_layers = {0, shape.final_norm + 2};
  return shape;
}

}  // namespace splitbrain::tools
