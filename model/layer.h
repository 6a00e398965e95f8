#pragma once
// One node of the model graph, with everything derived from its attributes and input shapes.
// All counts here are per sample; model/statistics.h scales them to a batch and a dtype.

#include <cstdint>
#include <string>
#include <vector>

#include "model/op.h"
#include "model/shape.h"

namespace splitbrain::model {

// What the backward pass of a layer reads, so activation memory can be counted without counting
// a tensor twice when several layers keep the same one.
struct SavedForBackward {
  std::vector<int> inputs;     // positions in Layer::inputs whose tensors backward reads
  bool output = false;         // backward reads the layer's own output (e.g. relu)
  int64_t extra_elements = 0;  // per sample, in the model's dtype (attention probabilities...)
  int64_t extra_bytes = 0;     // per sample, whatever the dtype (dropout masks, pool indices)
  friend bool operator==(const SavedForBackward&, const SavedForBackward&) = default;
};

// FLOPs count a multiply-add as 2. Backward is split into the gradient with respect to the
// layer's inputs and the gradient with respect to its parameters.
struct LayerCost {
  int64_t params = 0;                // trainable parameters owned by the layer
  double forward_flops = 0;          // per sample
  double backward_input_flops = 0;   // per sample; 0 when no input needs a gradient
  double backward_weight_flops = 0;  // per sample
  SavedForBackward saved;
  friend bool operator==(const LayerCost&, const LayerCost&) = default;
};

struct Layer {
  std::string name;
  OpKind kind = OpKind::input;
  OpAttrs attrs;
  std::vector<int> inputs;            // indices of the producing layers (all smaller than this layer's)
  std::vector<int> consumers;         // indices of the layers that read this one's output
  Shape output_shape;                 // per sample: the batch dimension is left out
  bool output_is_tokens = false;      // integer token ids rather than values of the model dtype
  bool needs_input_gradient = false;  // some layer upstream has trainable parameters
  LayerCost cost;

  template <class Attrs>
  const Attrs& attr() const {
    return std::get<Attrs>(attrs);
  }
};

}  // namespace splitbrain::model
