#pragma once
// A model's per-layer and total figures for a given batch size and dtype: what `inspect` prints
// and what the cost model starts from.

#include <cstdint>
#include <vector>

#include "model/dtype.h"
#include "model/model.h"

namespace splitbrain::model {

struct LayerStatistics {
  int64_t params = 0;
  double forward_flops = 0;          // whole batch
  double backward_input_flops = 0;   // whole batch
  double backward_weight_flops = 0;  // whole batch
  int64_t output_bytes = 0;          // whole batch
  // Activation bytes this layer is responsible for keeping until backward: its output if any
  // layer's backward reads it (counted once, here at the producer), plus its own extras (masks,
  // indices, attention probabilities). Summing over layers counts every kept tensor once.
  int64_t saved_bytes = 0;
};

struct ModelStatistics {
  int64_t batch = 0;
  DType dtype = DType::fp32;
  std::vector<LayerStatistics> layers;  // same order as Model::layers()
  int64_t params = 0;
  int64_t param_bytes = 0;
  double forward_flops = 0;
  double backward_flops = 0;  // input plus weight gradients
  int64_t saved_bytes = 0;    // activations kept for backward by a plain (no recompute) step
};

// Bytes of one element of a layer's output: token ids are int32 whatever the model dtype.
int64_t output_element_bytes(const Layer& layer, DType dtype);
// Whether some layer's backward pass reads this layer's output.
bool output_kept_for_backward(const Model& model, int layer_index);

// Throws SizeOverflowError naming the model, batch, layer and figure when a byte count or a total
// does not fit in 64 bits.
ModelStatistics compute_statistics(const Model& model, int64_t batch, DType dtype);

}  // namespace splitbrain::model
