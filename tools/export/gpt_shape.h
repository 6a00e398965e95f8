#pragma once
// The hyperparameters of a GPT-2-style decoder (the zoo's `gpt:` models, or a model file built
// the same way), read back from its layers: what a trainer such as Megatron-LM or the PyTorch
// script tools/torchrun_train.py needs to build the same network.

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace splitbrain::tools {

struct GptShape {
  int layers = 0;  // transformer layers (blocks)
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t ffn_hidden = 0;  // the MLP's inner width (4 x hidden in GPT-2)
  int64_t sequence = 0;    // tokens per sample
  int64_t vocabulary = 0;
  int64_t positions = 0;    // rows of the learned position table
  bool tied_head = true;    // the output head reuses the token embedding's table
  bool linear_bias = true;  // the blocks' linears have biases
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  // Index of the first layer (ln_1) of each block, and of the final layer norm.
  std::vector<int> block_starts;
  int final_norm = -1;
};

// Layers per block and the kinds, in model order, of the embedding part, a block and the head.
constexpr int kGptLayersPerBlock = 12;

// The shape of `model` when its layers are, in model order, tokens, token and position
// embeddings, their sum and dropout, N pre-norm blocks (layernorm, linear, attention, linear,
// dropout, add, layernorm, linear, gelu, linear, dropout, add), a final layernorm, the output
// linear and the loss. Throws ExportRefusal naming the first layer that differs.
GptShape read_gpt_shape(const model::Model& model);

}  // namespace splitbrain::tools
