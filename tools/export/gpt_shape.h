#pragma once
// The hyperparameters of a decoder-only transformer that Megatron-LM builds as its GPT model, read
// back from its layers: a GPT-2-style decoder (the zoo's `gpt:` models) or a Llama-style one (the
// zoo's `llama` models, llama_shape.h), each also from a model file built the same way. What a
// trainer such as Megatron-LM or the PyTorch script tools/torchrun_train.py needs to build the
// same network, and where in it Megatron-LM's tensor parallelism splits what.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace splitbrain::tools {

// GPT-2: learned positions, LayerNorm, GELU MLP. Llama: rotary positions, RMSNorm, SwiGLU MLP.
enum class DecoderStyle { gpt2, llama };
std::string_view decoder_style_name(DecoderStyle style);  // "GPT-2-style", "Llama-style"

// How Megatron-LM's tensor parallelism splits a layer of a transformer block: its output
// features (column-parallel: the q|k|v and first MLP linears and what follows them up to the
// row-parallel one), its input features (row-parallel: the output projections), or, for the
// per-token layers (norms, dropouts, residual adds), the sequence under sequence parallelism.
enum class MegatronSplit { column, row, per_token };

struct GptShape {
  DecoderStyle style = DecoderStyle::gpt2;
  int layers = 0;  // transformer layers (blocks)
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // key/value heads: heads, or fewer under grouped-query attention
  int64_t ffn_hidden = 0;  // the MLP's inner width (4 x hidden in GPT-2)
  int64_t sequence = 0;    // tokens per sample
  int64_t vocabulary = 0;
  int64_t positions = 0;      // rows of the learned position table (0: none, rotary positions)
  double rope_theta = 0.0;    // the rotary base (0: no rotary positions)
  bool rms_norm = false;      // the norms are RMSNorm (else LayerNorm)
  double norm_epsilon = 0.0;  // every norm's epsilon (read for RMSNorm)
  bool swiglu = false;        // the MLP is SwiGLU over two linears (else one linear and GELU)
  bool tied_head = true;      // the output head reuses the token embedding's table
  bool linear_bias = true;    // the blocks' linears have biases
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  // Mixture of experts (Mixtral-style, Llama only): every block's MLP half is one `moe` layer of
  // `experts` SwiGLU experts ffn_hidden wide, the top `expert_top_k` of them per token, each
  // taking at most `expert_capacity_factor` times its balanced share of tokens (0: no cap).
  // 0 experts: a dense MLP.
  int64_t experts = 0;
  int64_t expert_top_k = 0;
  double expert_capacity_factor = 0.0;
  // Index of the first layer (the attention's norm) of each block, and of the final norm.
  std::vector<int> block_starts;
  int final_norm = -1;
  // Megatron-LM's split of each layer of a block, in block order (as many as a block's layers).
  std::vector<MegatronSplit> block_splits;
  // The per-token layers outside the blocks but the final norm (the input, the position part of
  // the embeddings, the loss), which Megatron-LM's tensor parallelism splits by sequence or not at all.
  std::vector<int> outer_per_token_layers;

  int layers_per_block() const { return static_cast<int>(block_splits.size()); }
  int attention_layer(int block) const { return block_starts[static_cast<size_t>(block)] + 2; }
};

// Layers per GPT-2 block.
constexpr int kGptLayersPerBlock = 12;

// The shape of `model` when its layers are, in model order, tokens, token and position
// embeddings, their sum and dropout, N pre-norm blocks (layernorm, linear, attention, linear,
// dropout, add, layernorm, linear, gelu, linear, dropout, add), a final layernorm, the output
// linear and the loss. Throws ExportRefusal naming the first layer that differs.
GptShape read_gpt_shape(const model::Model& model);

// The shape of a GPT-2-style or a Llama-style decoder, read by the reader of the style its
// embedding part shows (a position table after the token embedding: GPT-2; none: Llama).
// Throws that reader's ExportRefusal.
GptShape read_decoder_shape(const model::Model& model);

}  // namespace splitbrain::tools
