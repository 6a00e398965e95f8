#pragma once
// Operator kinds and their attributes. An op's attributes are exactly the fields a user can set
// in a model file; everything else (shapes, parameter counts, FLOPs) is derived from them.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "model/shape.h"

namespace splitbrain::model {

// Every op kind, once. The enum below and each library's table of its op units (model/op_unit.h,
// plans/op_rules.h, exec/ops/layer_ops.cc) are generated from this list, so a kind missing its
// unit in any library fails to link instead of failing at run time. Adding an op: model/README.md.
#define SPLITBRAIN_OP_KINDS(X) \
  X(input)                     \
  X(conv2d)                    \
  X(linear)                    \
  X(maxpool)                   \
  X(avgpool)                   \
  X(adaptive_avgpool)          \
  X(relu)                      \
  X(gelu)                      \
  X(swiglu)                    \
  X(moe)                       \
  X(dropout)                   \
  X(flatten)                   \
  X(batchnorm)                 \
  X(layernorm)                 \
  X(rms_norm)                  \
  X(add)                       \
  X(concat)                    \
  X(embedding)                 \
  X(matmul)                    \
  X(self_attention)            \
  X(softmax_cross_entropy)

enum class OpKind {
#define SPLITBRAIN_OP_KIND_ENUMERATOR(name) name,
  SPLITBRAIN_OP_KINDS(SPLITBRAIN_OP_KIND_ENUMERATOR)
#undef SPLITBRAIN_OP_KIND_ENUMERATOR
};

#define SPLITBRAIN_OP_KIND_COUNT_ONE(name) +1
inline constexpr int kOpKindCount = 0 SPLITBRAIN_OP_KINDS(SPLITBRAIN_OP_KIND_COUNT_ONE);
#undef SPLITBRAIN_OP_KIND_COUNT_ONE

// Training data fed to the network. `shape` is per sample. Token inputs hold integer ids
// (stored as int32) instead of values of the model's dtype.
struct InputAttrs {
  Shape shape;
  bool tokens = false;
  friend bool operator==(const InputAttrs&, const InputAttrs&) = default;
};

struct Conv2dAttrs {
  int64_t out_channels = 0;
  Size2 kernel;
  Size2 stride{1, 1};
  Size2 padding{0, 0};
  Size2 dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
  friend bool operator==(const Conv2dAttrs&, const Conv2dAttrs&) = default;
};

// y = x W^T + b over the last dimension of x. With `tied_to` the weight is the table of the
// named embedding layer (GPT's output head); it is then counted once, at the embedding.
struct LinearAttrs {
  int64_t in_features = 0;  // 0 = take it from the input; the built model always has it set
  int64_t out_features = 0;
  bool bias = true;
  std::string tied_to;
  friend bool operator==(const LinearAttrs&, const LinearAttrs&) = default;
};

// maxpool and avgpool. Padding of average pooling counts the padded zeros (PyTorch's default).
struct Pool2dAttrs {
  Size2 kernel;
  Size2 stride;  // PyTorch's default is the kernel size
  Size2 padding{0, 0};
  bool ceil_mode = false;
  friend bool operator==(const Pool2dAttrs&, const Pool2dAttrs&) = default;
};

// Global average pooling is output_size {1, 1}.
struct AdaptiveAvgPoolAttrs {
  Size2 output_size{1, 1};
  friend bool operator==(const AdaptiveAvgPoolAttrs&, const AdaptiveAvgPoolAttrs&) = default;
};

struct DropoutAttrs {
  double probability = 0.5;
  friend bool operator==(const DropoutAttrs&, const DropoutAttrs&) = default;
};

// batchnorm normalises each channel (dimension 0 of the per-sample shape) over batch and space;
// layernorm normalises the last dimension. Both have a learned scale and shift.
struct NormAttrs {
  double epsilon = 1e-5;
  friend bool operator==(const NormAttrs&, const NormAttrs&) = default;
};

// rms_norm (Llama's RMSNorm, torch.nn.RMSNorm) divides the last dimension by its root mean
// square: y = x / sqrt(mean(x^2) + epsilon) * weight, a learned scale and no shift or centring.
// In model files its epsilon is "eps", PyTorch's name.
struct RmsNormAttrs {
  double epsilon = 1e-5;
  friend bool operator==(const RmsNormAttrs&, const RmsNormAttrs&) = default;
};

// Joins inputs along a per-sample dimension (0 = channels for images).
struct ConcatAttrs {
  int64_t axis = 0;
  friend bool operator==(const ConcatAttrs&, const ConcatAttrs&) = default;
};

// Looks up rows of a table of num_embeddings x embedding_dim. With `positional` the rows are the
// positions 0..T-1 of the input sequence instead of its token ids (GPT's learned positions).
struct EmbeddingAttrs {
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  bool positional = false;
  friend bool operator==(const EmbeddingAttrs&, const EmbeddingAttrs&) = default;
};

// Batched product of two inputs: [..., M, K] x [..., K, N] (or [..., N, K] with transpose_b).
struct MatMulAttrs {
  bool transpose_b = false;
  friend bool operator==(const MatMulAttrs&, const MatMulAttrs&) = default;
};

// Scaled dot-product attention on a fused q|k|v input, giving [T, heads * head_dim]. The
// projections around it are ordinary linear layers.
//
// With kv_heads K (0 = heads: multi-head attention) the heads share K key/value heads in groups
// of heads / K query heads (grouped-query attention; K = 1 is multi-query). The input is
// [T, (heads + 2K) * head_dim], group-major: per group, its heads / K query heads, then its k,
// then its v, each head_dim wide. With K = heads that is [head][q|k|v][head_dim].
//
// rope_theta > 0 rotates q and k of every head by their position t = 0..T-1 before the scores
// (rotary position embedding, Hugging Face's Llama convention "rotate half"): dimension i of the
// first half of a head pairs with dimension i + head_dim/2, both turned by the angle
// t * rope_theta^(-2i/head_dim), i < head_dim/2. 0 = no rotation.
//
// fused keeps for backward, besides the input, only the log-sum-exp of every score row (heads x
// T values in fp32) rather than the T x T probabilities of every head, and backward computes the
// scores and probabilities again from q and k (FlashAttention's memory, as cuDNN's fused SDPA and
// PyTorch's scaled_dot_product_attention keep it). It takes no dropout on the probabilities.
struct SelfAttentionAttrs {
  int64_t heads = 0;
  bool causal = true;
  // Dropout on the probabilities (Megatron-LM's attention dropout, 0.1 there): it keeps a mask
  // and the dropped probabilities for backward. The executor runs 0 only.
  double dropout = 0.0;
  int64_t kv_heads = 0;
  double rope_theta = 0.0;
  bool fused = false;

  // The key/value heads: kv_heads, or heads when it is unset.
  int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  friend bool operator==(const SelfAttentionAttrs&, const SelfAttentionAttrs&) = default;
};

// A sparse mixture-of-experts MLP (Mixtral's, Hugging Face's MixtralSparseMoeBlock) on x [T, D]:
// a router (D x experts, no bias) gives each token softmax probabilities over the experts; the
// top_k most likely are kept and renormalised to sum to 1, and the output is the sum of those
// experts' outputs, each weighted by its probability. Every expert is a bias-free SwiGLU MLP
// w2(silu(x w1) * (x w3)), ffn wide.
//
// capacity_factor 0: every routed token is computed. > 0: each expert computes at most
// ceil(capacity_factor * T * top_k / experts) tokens and the rest of what is routed to it is
// dropped (that expert adds nothing for them), as Switch Transformer's capacity does.
struct MoeAttrs {
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t ffn = 0;
  double capacity_factor = 0.0;
  friend bool operator==(const MoeAttrs&, const MoeAttrs&) = default;
};

// Ops with nothing to set: relu, gelu, flatten, add, softmax_cross_entropy.
struct NoAttrs {
  friend bool operator==(const NoAttrs&, const NoAttrs&) = default;
};

using OpAttrs =
    std::variant<NoAttrs, InputAttrs, Conv2dAttrs, LinearAttrs, Pool2dAttrs, AdaptiveAvgPoolAttrs, DropoutAttrs,
                 NormAttrs, RmsNormAttrs, ConcatAttrs, EmbeddingAttrs, MatMulAttrs, SelfAttentionAttrs, MoeAttrs>;

// The name used in model files and tables, e.g. "conv2d".
std::string_view op_name(OpKind kind);
// The kind for a name, or nullopt when the name is unknown.
std::optional<OpKind> op_kind_from_name(std::string_view name);
// Every kind, in declaration order (for help texts and error messages).
std::span<const OpKind> all_op_kinds();
// The attributes a kind takes, with their defaults.
OpAttrs default_attrs(OpKind kind);
// How many inputs a kind takes: {min, max}; max = -1 means "any number from min up".
std::pair<int, int> input_arity(OpKind kind);

}  // namespace splitbrain::model
