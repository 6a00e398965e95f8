#pragma once
// Op sharding rules: for each op kind, which roles it can split (plans/layer_sharding.h) and the
// layouts that a choice of roles gives its tensors. These are SoyBean/Tofu's "aligned tilings"
// generalised to a mesh: split the batch (replicated weight), split the output features (weight
// rows; input replicated), split the contraction (weight columns; output a partial sum), split
// height or sequence (domain parallelism, halo exchange for convolutions).
//
// All activation shapes here are global and carry the batch dimension first: [N, C, H, W] for
// images, [N, F] for flat features, [N, T, D] for sequences, [N, T] for token ids.

#include <optional>
#include <vector>

#include "model/dtype.h"
#include "model/model.h"
#include "plans/collective.h"
#include "plans/layer_sharding.h"
#include "plans/mesh.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {

// One trainable tensor of a layer and how it is split (weights and biases are separate).
struct ParameterShard {
  std::vector<int64_t> global_shape;
  TensorLayout layout;
  int64_t local_elements = 0;
};

struct LayerLayouts {
  std::vector<TensorLayout> inputs;  // the layout each input must arrive in
  TensorLayout output;               // the layout the layer produces
  // The layout of the gradient backward produces for each input (token inputs: empty layout).
  // It differs from `inputs` where the input was replicated over axes that split the weight
  // rows: each rank then holds a partial sum of the input gradient.
  std::vector<TensorLayout> input_gradients;
  std::vector<ParameterShard> parameters;  // empty for layers without parameters
  // Axes over which the parameter gradients must be summed (ranks that saw different samples
  // or positions with the same weight shard).
  std::vector<int> gradient_sync_axes;
  // Communication inside the op, per step of the layer: halo exchange of a spatially split
  // convolution, batchnorm statistics over a split batch.
  std::vector<Collective> forward_internal;
  std::vector<Collective> backward_internal;
  // This rank's share of the layer's FLOPs (1 / the number of ranks that split the work).
  double work_fraction = 1.0;
};

// Whether `role` may split layer `layer` at all (e.g. relu cannot take a partial input, so no
// `in`; layernorm normalises the features, so no `out`). Structural: no sizes involved.
bool role_allowed(const model::Layer& layer, ShardRole role);

// The layouts for layer `index` of `model` split by `sharding` on `mesh`, for `batch` samples
// (the micro-batch when pipelining). Throws PlanError naming the layer and the role when the
// sharding is not allowed or does not divide the shapes it splits. A tied head owns no weight
// (its table's embedding holds it), unless `holds_tied_copy`: on another pipeline stage than its
// table it holds a copy of the table as its weight (plans/tied_weights.h).
LayerLayouts layer_layouts(const model::Model& model, int index, const LayerSharding& sharding, const Mesh& mesh,
                           int64_t batch, model::DType dtype, bool holds_tied_copy = false);

// Whether a layer chooses its own sharding (it has parameters, shares an embedding's weight, or
// is an input) rather than following the layer it reads: plan files list or default only these,
// and the planner decides only these.
bool chooses_own_sharding(const model::Layer& layer);

// The sharding a layer that does not choose its own takes: its first producer's, without the
// roles the op cannot take (their axes then replicate it; redistribution handles the change).
LayerSharding inherited_sharding(const model::Layer& layer, const LayerSharding& producer);

// The global shape, batch included, of a layer's output.
std::vector<int64_t> activation_shape(const model::Layer& layer, int64_t batch);

}  // namespace splitbrain::plans
