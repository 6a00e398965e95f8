#pragma once
// The exact kernel problem a rank's layer runs for one micro-batch under a plan, as the executor
// builds it: a convolution's local batch, channels and image (a height split's block extended by
// its halo rows, padded then only at the sides), a pooling's local block, an activation's local
// element count. `splitbrain calibrate --model` times these problems with the executor's own
// kernels, and the cost model reads the measured seconds back by key (Device::measured_kernels):
// small or oddly split images run far from the FLOP-sized curve (a 2x2 image split in two rows
// runs its kernel on 3 rows for 1 output row), small micro-batches of memory-bound ops stay in
// the caches, and only a measurement of the very shape says how far.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "model/model.h"
#include "plans/mesh.h"
#include "plans/op_sharding.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

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
  int64_t dilation_h = 1;
  int64_t dilation_w = 1;
  int64_t groups = 1;
  bool bias = true;

  bool operator==(const ConvProblem&) const = default;
};

struct PoolProblem {
  bool max = true;  // else average (counting padded zeros)
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;  // on both sides
  int64_t pad_w = 0;
  bool ceil_mode = false;

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

// A linear layer's local product, as the executor's op builds its kernel: rows = every local
// dim of the input but the last, y[rows, out] = x[rows, in] W^T (+ b).
struct LinearProblem {
  int64_t rows = 1;
  int64_t in_features = 1;
  int64_t out_features = 1;
  bool bias = true;

  bool operator==(const LinearProblem&) const = default;
};

// A self-attention core on its local heads, as the executor's op builds its kernel from the
// fused q, k, v input [batch, seq, 3 x heads x head_dim]: scores, softmax, and their product with
// v; backward the whole fused gradient (its input gradient; it has no weights).
struct AttentionProblem {
  int64_t batch = 1;
  int64_t seq = 1;
  int64_t heads = 1;
  int64_t head_dim = 1;
  bool causal = true;

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
// softmax and the summed loss, backward the logits' gradient. A language model's vocabulary makes
// it one of the step's larger kernels (a tiny GPT's 128 x 96 ran 54 us, an exp per logit).
struct LossProblem {
  int64_t rows = 1;
  int64_t classes = 1;

  bool operator==(const LossProblem&) const = default;
};

using KernelProblem = std::variant<ConvProblem, PoolProblem, ActivationProblem, LinearProblem, AttentionProblem,
                                   LayerNormProblem, LossProblem>;

// The problem of layer `index` on `mesh` for a micro-batch of `micro_batch` samples: conv2d,
// maxpool, avgpool, relu, gelu, dropout, linear, self-attention (without dropout on its
// probabilities, as the executor runs it), layer norm and the softmax cross-entropy loss have one;
// nullopt for any other op kind or a layer this rank does no work for.
std::optional<KernelProblem> kernel_problem(const model::Model& model, int index, const plans::LayerLayouts& layouts,
                                            const plans::Mesh& mesh, int64_t micro_batch);

// The problem's amount of independent work: samples for a convolution, pooling or attention,
// values for an activation, rows for a linear layer, layer norm or loss. A kernel's time grows
// about in proportion to it once it is not tiny; `with_work_items` is the same problem with
// `items` of it, all else kept.
int64_t work_items(const KernelProblem& problem);
KernelProblem with_work_items(const KernelProblem& problem, int64_t items);

// Ranks computing at once on one node of `cluster` under a plan on `mesh`: cores (or GPUs) of a
// node share memory bandwidth, caches and, with SMT, execution units, so a kernel runs slower
// beside busy neighbours; a measured problem is keyed by how many there were.
int busy_ranks_per_node(const Cluster& cluster, const plans::Mesh& mesh);

// Canonical text of a problem timed with `busy_ranks` ranks per node computing at once, the key
// of Device::measured_kernels, e.g. "conv2d n32 c64 h18 w16 k128 r3x3 s1x1 p0,0,1,1 d1x1 g1 bias,
// 2 busy", "maxpool n16 c32 h28 w28 r2x2 s2x2 p0,0, 1 busy", "relu 401408, 2 busy", "dropout 262144 p0.5, 1 busy",
// "linear m64 k4096 n1024 bias, 1 busy".
//
// Calibrate times every problem twice: with the caches swept first (the data the kernel reads
// comes from memory, as in a model whose step does not fit the last-level cache) and with them
// warm (it does fit, so the layer before left its output and the weights in the cache); the warm
// time's key ends in ", caches warm".
enum class CacheState { swept, warm };
std::string kernel_key(const KernelProblem& problem, int busy_ranks, CacheState caches = CacheState::swept);

}  // namespace splitbrain::sim
