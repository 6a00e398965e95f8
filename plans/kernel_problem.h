#pragma once
// The exact kernel problem a rank's layer runs for one micro-batch under a plan, declared once:
// the executor builds its kernels from it (exec/kernels: Conv2dShape is ConvProblem), the
// simulator prices it and keys calibrated times by it (sim/kernel_problem.h), and
// `splitbrain calibrate --model` times it. A convolution's local batch, channels and image (a
// height split's block extended by its halo rows, padded then only at the sides), a pooling's
// local block, an activation's local element count, a linear layer's local product, an attention
// core's local heads, a layer norm's and the loss's rows.

#include <cstdint>
#include <optional>
#include <variant>

#include "model/model.h"
#include "plans/mesh.h"
#include "plans/op_sharding.h"

namespace splitbrain::plans {

// 2-D convolution (PyTorch's nn.Conv2d) on local NCHW tensors. Padding is per side: a
// height-split convolution reads its input extended by the halo rows and pads only the sides
// that are edges of the global image.
struct ConvProblem {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t height = 1;  // the rows the kernel reads: local rows + 2 x halo rows
  int64_t width = 1;
  int64_t out_channels = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_top = 0;
  int64_t pad_bottom = 0;
  int64_t pad_left = 0;
  int64_t pad_right = 0;
  int64_t dilation_h = 1;  // PyTorch's convention: 1 = dense (oneDNN counts the gaps: 0)
  int64_t dilation_w = 1;
  int64_t groups = 1;
  bool bias = true;

  int64_t out_height() const;  // floor((H + pads - dilation*(k-1) - 1) / stride) + 1
  int64_t out_width() const;
  bool operator==(const ConvProblem&) const = default;
};

// Max or average pooling (PyTorch's MaxPool2d, AvgPool2d counting padded zeros) on local NCHW
// tensors, padding per side as for convolutions.
struct PoolProblem {
  bool max = true;  // else average
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_top = 0;
  int64_t pad_bottom = 0;
  int64_t pad_left = 0;
  int64_t pad_right = 0;
  bool ceil_mode = false;

  int64_t out_height() const;  // PyTorch's window count, the last window starting inside the input
  int64_t out_width() const;
  bool operator==(const PoolProblem&) const = default;
};

// An element-wise op on `elements` local values: relu, gelu, or dropout (whose per-element hash
// for its split-independent mask makes it compute-bound, not memory-bound).
struct ActivationProblem {
  model::OpKind kind = model::OpKind::relu;
  int64_t elements = 0;
  double drop_probability = 0.0;  // dropout only

  bool operator==(const ActivationProblem&) const = default;
};

// A linear layer's local product: rows = every local dim of the input but the last,
// y[rows, out] = x[rows, in] W^T (+ b).
struct LinearProblem {
  int64_t rows = 1;
  int64_t in_features = 1;
  int64_t out_features = 1;
  bool bias = true;

  bool operator==(const LinearProblem&) const = default;
};

// A self-attention core on its local heads, from the fused q, k, v input
// [batch, seq, (heads + 2 x kv heads) x head_dim]: scores, softmax, and their product with v;
// backward the whole fused gradient (its input gradient; it has no weights). kv_heads is the
// local key/value heads of grouped-query attention, 0 for multi-head attention (as many as
// heads), so a multi-head problem and its calibrated time keep their key; `rope` rotates q and k
// by position first (model/op.h: the angle's base does not change the work); `fused` keeps only
// the softmax statistics, and its backward computes the scores again. `queries` is a context-
// parallel rank's block of query positions (against all seq keys), 0 for all of them.
struct AttentionProblem {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;
  int64_t kv_heads = 0;
  bool rope = false;
  bool fused = false;
  int64_t queries = 0;

  int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t query_rows() const { return queries > 0 ? queries : seq; }

  bool operator==(const AttentionProblem&) const = default;
};

// A layer norm over `features` values of each of `rows` rows; its backward writes the input
// gradient and adds the scale's and shift's in one kernel (timed as its input gradient).
struct LayerNormProblem {
  int64_t rows = 1;
  int64_t features = 1;

  bool operator==(const LayerNormProblem&) const = default;
};

// The loss: a softmax cross-entropy over the `classes` logits of each of `rows` rows; forward the
// softmax and the summed loss, backward the logits' gradient.
struct LossProblem {
  int64_t rows = 1;
  int64_t classes = 1;

  bool operator==(const LossProblem&) const = default;
};

using KernelProblem = std::variant<ConvProblem, PoolProblem, ActivationProblem, LinearProblem, AttentionProblem,
                                   LayerNormProblem, LossProblem>;

// What an op's kernel-problem rule reads: the layer, its layouts on the mesh, the micro-batch,
// and its first input's local shape (batch first).
struct KernelProblemRequest {
  const model::Layer& layer;
  const LayerLayouts& layouts;
  const Mesh& mesh;
  int64_t micro_batch = 0;
  std::vector<int64_t> local_input;
};

// The problem of layer `index` on `mesh` for a micro-batch of `micro_batch` samples, from its
// op's rules (plans/op_rules.h): conv2d, maxpool, avgpool, relu, gelu, dropout, linear,
// self-attention (without dropout on its probabilities, as the executor runs it), layer norm and
// the softmax cross-entropy loss have one; nullopt for any other op kind or a layer this rank
// does no work for.
std::optional<KernelProblem> kernel_problem(const model::Model& model, int index, const LayerLayouts& layouts,
                                            const Mesh& mesh, int64_t micro_batch);

// The problem's amount of independent work: samples for a convolution, pooling or attention,
// values for an activation, rows for a linear layer, layer norm or loss. A kernel's time grows
// about in proportion to it once it is not tiny; `with_work_items` is the same problem with
// `items` of it, all else kept.
int64_t work_items(const KernelProblem& problem);
KernelProblem with_work_items(const KernelProblem& problem, int64_t items);

}  // namespace splitbrain::plans
