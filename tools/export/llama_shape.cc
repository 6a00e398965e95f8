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
// A block is its attention half then its MLP half: Llama's SwiGLU MLP, or Mixtral's experts.
constexpr std::array<OpKind, 5> kAttentionHalf = {OpKind::rms_norm, OpKind::linear, OpKind::self_attention,
                                                  OpKind::linear, OpKind::add};
constexpr std::array<OpKind, 6> kSwigluHalf = {OpKind::rms_norm, OpKind::linear, OpKind::linear,
                                               OpKind::swiglu,   OpKind::linear, OpKind::add};
constexpr std::array<OpKind, 3> kExpertsHalf = {OpKind::rms_norm, OpKind::moe, OpKind::add};
static_assert(kAttentionHalf.size() + kSwigluHalf.size() == kLlamaLayersPerBlock);
static_assert(kAttentionHalf.size() + kExpertsHalf.size() == kMixtralLayersPerBlock);
// Megatron-LM's split of each layer of the halves: wqkv and the attention column-parallel, wo
// row-parallel; the gate and up linears and swiglu column-parallel (its fused fc1 holds both
// halves, each rank its share of each), the down linear row-parallel; norms and adds per token.
// The moe layer is per token too: the plan keeps every expert whole on every tensor-parallel
// rank (the export writes --expert-tensor-parallel-size 1), each rank routing its own tokens.
constexpr std::array<MegatronSplit, 5> kAttentionSplits = {MegatronSplit::per_token, MegatronSplit::column,
                                                           MegatronSplit::column, MegatronSplit::row,
                                                           MegatronSplit::per_token};
constexpr std::array<MegatronSplit, 6> kSwigluSplits = {MegatronSplit::per_token, MegatronSplit::column,
                                                        MegatronSplit::column,    MegatronSplit::column,
                                                        MegatronSplit::row,       MegatronSplit::per_token};
constexpr std::array<MegatronSplit, 3> kExpertsSplits = {MegatronSplit::per_token, MegatronSplit::per_token,
                                                         MegatronSplit::per_token};
constexpr std::array<OpKind, 3> kHead = {OpKind::rms_norm, OpKind::linear, OpKind::softmax_cross_entropy};

// Offsets within a block.
constexpr int kAttentionNorm = 0, kQkv = 1, kAttention = 2, kAttentionOut = 3, kMlpNorm = 5;
// Offsets within a block with a SwiGLU MLP, and with experts.
constexpr int kGate = 6, kUp = 7, kSwiglu = 8, kDown = 9;
constexpr int kExperts = 6;

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

// The attention half of the block starting at `start` against the first block's (or, for the
// first, its widths read).
void read_attention_half(const model::Model& model, int start, GptShape& shape) {
  expect_layer_kinds(model, start, kAttentionHalf, fmt::format("block {}", shape.layers), kDecoder);
  const auto& attention = model.layer(start + kAttention).attr<model::SelfAttentionAttrs>();
  if (shape.layers == 0) {
    if (attention.heads <= 0 || shape.hidden % attention.heads != 0) {
      refuse(model, start + kAttention, fmt::format("heads dividing its width {}", shape.hidden));
    }
    shape.heads = attention.heads;
    shape.kv_heads = attention.kv_head_count();
    shape.rope_theta = attention.rope_theta;
    shape.attention_dropout = attention.dropout;
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
  if (linear(model, start + kAttentionOut).out_features != shape.hidden) {
    refuse(model, start + kAttentionOut, fmt::format("an output projection back to its width {}", shape.hidden));
  }
  expect_norm_epsilon(model, start + kAttentionNorm, shape);
}

void expect_linear_bias(const model::Model& model, int index, const GptShape& shape) {
  if (linear(model, index).bias != shape.linear_bias) {
    refuse(model, index, fmt::format("a linear {} bias, as its first", shape.linear_bias ? "with" : "without"));
  }
}

// Llama's MLP half: gate and up linears of its norm, swiglu of the two, the down linear.
void read_swiglu_half(const model::Model& model, int start, GptShape& shape) {
  expect_layer_kinds(model, start + kMlpNorm, kSwigluHalf, fmt::format("block {}'s MLP half", shape.layers), kDecoder);
  if (shape.layers == 0) shape.ffn_hidden = linear(model, start + kGate).out_features;
  if (linear(model, start + kDown).out_features != shape.hidden) {
    refuse(model, start + kDown, fmt::format("an output projection back to its width {}", shape.hidden));
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
  for (int offset : {kQkv, kAttentionOut, kGate, kUp, kDown}) expect_linear_bias(model, start + offset, shape);
  expect_norm_epsilon(model, start + kMlpNorm, shape);
}

// Mixtral's MLP half: one moe layer of SwiGLU experts (bias-free, as the moe op's experts are).
void read_experts_half(const model::Model& model, int start, GptShape& shape) {
  expect_layer_kinds(model, start + kMlpNorm, kExpertsHalf, fmt::format("block {}'s MLP half", shape.layers), kDecoder);
  const auto& moe = model.layer(start + kExperts).attr<model::MoeAttrs>();
  if (shape.layers == 0) {
    shape.experts = moe.experts;
    shape.expert_top_k = moe.top_k;
    shape.ffn_hidden = moe.ffn;
    shape.expert_capacity_factor = moe.capacity_factor;
  } else if (moe.experts != shape.experts || moe.top_k != shape.expert_top_k || moe.ffn != shape.ffn_hidden ||
             moe.capacity_factor != shape.expert_capacity_factor) {
    refuse(model, start + kExperts,
           fmt::format("the experts of its first block ({} of width {}, top {}, capacity factor {}): Megatron-LM's "
                       "--num-experts and --moe-* flags hold for every layer",
                       shape.experts, shape.ffn_hidden, shape.expert_top_k, shape.expert_capacity_factor));
  }
  if (shape.linear_bias) {
    refuse(model, start + kExperts, "experts with biases, as its first block's linears have (the moe op has none)");
  }
  expect_linear_bias(model, start + kQkv, shape);
  expect_linear_bias(model, start + kAttentionOut, shape);
  expect_norm_epsilon(model, start + kMlpNorm, shape);
}

// The block starting at `start` against the first one; the first block's MLP half (SwiGLU or
// experts) decides the others'.
void read_block(const model::Model& model, int start, GptShape& shape) {
  read_attention_half(model, start, shape);
  const bool experts = shape.layers == 0
                           ? start + kExperts < model.size() && model.layer(start + kExperts).kind == OpKind::moe
                           : shape.experts > 0;
  if (experts)
    read_experts_half(model, start, shape);
  else
    read_swiglu_half(model, start, shape);
}

}  // namespace

GptShape read_llama_shape(const model::Model& model) {
  GptShape shape;
  shape.style = DecoderStyle::llama;
  shape.rms_norm = true;
  shape.swiglu = true;
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
    index += shape.experts > 0 ? kMixtralLayersPerBlock : kLlamaLayersPerBlock;
  }
  if (shape.layers == 0) refuse(model, index, "its first block (rms_norm, linear, attention)");
  shape.block_splits.assign(kAttentionSplits.begin(), kAttentionSplits.end());
  if (shape.experts > 0)
    shape.block_splits.insert(shape.block_splits.end(), kExpertsSplits.begin(), kExpertsSplits.end());
  else
    shape.block_splits.insert(shape.block_splits.end(), kSwigluSplits.begin(), kSwigluSplits.end());
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
