#pragma once
// The hyperparameters of a Llama-style decoder (the zoo's `llama` models, or a model file built
// the same way), read back from its layers: what Megatron-LM needs to build it as its GPT model
// with RMSNorm, SwiGLU, rotary positions and grouped-query attention; or a Mixtral-style one (the
// zoo's `moe` models), whose blocks hold a mixture of SwiGLU experts in place of the MLP.

#include "model/model.h"
#include "tools/export/gpt_shape.h"

namespace splitbrain::tools {

// Layers per Llama block, and per Mixtral block (the MLP half one moe layer).
constexpr int kLlamaLayersPerBlock = 11;
constexpr int kMixtralLayersPerBlock = 8;

// The shape of `model` when its layers are, in model order, tokens, a token embedding (no
// position table), N pre-norm blocks (rms_norm, the fused q|k|v linear, self-attention, the
// output linear, add, rms_norm, the gate and up linears of one input, swiglu of the two, the
// down linear, add; or, Mixtral-style, rms_norm, moe, add), a final rms_norm, the output linear
// and the loss; every block alike (all with the same experts, or none), its
// q|k|v heads hidden / heads wide, all norms of one epsilon. Throws ExportRefusal naming the first
// layer that differs.
GptShape read_llama_shape(const model::Model& model);

}  // namespace splitbrain::tools
