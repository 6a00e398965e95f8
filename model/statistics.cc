#include "model/statistics.h"

#include <algorithm>

namespace splitbrain::model {

namespace {
constexpr int64_t kTokenIdBytes = 4;
}

int64_t output_element_bytes(const Layer& layer, DType dtype) {
  return layer.output_is_tokens ? kTokenIdBytes : bytes_per_element(dtype);
}

bool output_kept_for_backward(const Model& model, int layer_index) {
  const Layer& layer = model.layer(layer_index);
  if (layer.cost.saved.output) return true;
  return std::any_of(layer.consumers.begin(), layer.consumers.end(), [&](int consumer_index) {
    const Layer& consumer = model.layer(consumer_index);
    return std::any_of(consumer.cost.saved.inputs.begin(), consumer.cost.saved.inputs.end(),
                       [&](int position) { return consumer.inputs[static_cast<size_t>(position)] == layer_index; });
  });
}

ModelStatistics compute_statistics(const Model& model, int64_t batch, DType dtype) {
  ModelStatistics stats;
  stats.batch = batch;
  stats.dtype = dtype;
  const auto samples = static_cast<double>(batch);
  for (int i = 0; i < model.size(); ++i) {
    const Layer& layer = model.layer(i);
    LayerStatistics s;
    s.params = layer.cost.params;
    s.forward_flops = samples * layer.cost.forward_flops;
    s.backward_input_flops = samples * layer.cost.backward_input_flops;
    s.backward_weight_flops = samples * layer.cost.backward_weight_flops;
    s.output_bytes = batch * num_elements(layer.output_shape) * output_element_bytes(layer, dtype);
    const SavedForBackward& saved = layer.cost.saved;
    s.saved_bytes = (output_kept_for_backward(model, i) ? s.output_bytes : 0) +
                    batch * (saved.extra_elements * bytes_per_element(dtype) + saved.extra_bytes);
    stats.params += s.params;
    stats.forward_flops += s.forward_flops;
    stats.backward_flops += s.backward_input_flops + s.backward_weight_flops;
    stats.saved_bytes += s.saved_bytes;
    stats.layers.push_back(s);
  }
  stats.param_bytes = stats.params * bytes_per_element(dtype);
  return stats;
}

}  // namespace splitbrain::model
