#pragma once
// The hyperparameters of a Llama-style decoder (the zoo's `llama` models, or a model file built
// the same way), read back from its layers: what Megatron-LM needs to build it as its GPT model
// with RMSNorm, SwiGLU, rotary positions and grouped-query attention.

#include "model/model.h"
#include "tools/export/gpt_shape.h"

namespace splitbrain::tools {

// Layers per Llama block.
constexpr int kLlamaLayersPerBlock = 11;

// The shape of `model` when its layers are, in model order, tokens, a token embedding (no
// position table), N pre-norm blocks (rms_norm, the fused q|k|v linear, self-attention, the
// output linear, add, rms_norm, the gate and up linears of one input, swiglu of the two, the
// down linear, add), a final rms_norm, the output linear and the loss; every block alike, its
// q|k|v heads hidden / heads wide, all norms of one epsilon. Throws ExportRefusal naming the first
// layer that differs.
GptShape read_llama_shape(const model::Model& model);

}  // namespace splitbrain::tools
