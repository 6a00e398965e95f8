#include "model/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "model/errors.h"

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
  // Every byte count below is checked: a batch large enough to wrap one is refused, naming the
  // layer and the figure, rather than printed negative.
  std::string_view field;
  const auto refuse = [&](const Layer& layer, const SizeOverflowError& e) {
    throw SizeOverflowError(fmt::format("model '{}' at a batch of {} ({}): layer '{}': {}: {}", model.name(), batch,
                                        dtype_name(dtype), layer.name, field, e.what()));
  };
  for (int i = 0; i < model.size(); ++i) {
    const Layer& layer = model.layer(i);
    LayerStatistics s;
    s.params = layer.cost.params;
    s.forward_flops = samples * layer.cost.forward_flops;
    s.backward_input_flops = samples * layer.cost.backward_input_flops;
    s.backward_weight_flops = samples * layer.cost.backward_weight_flops;
    const SavedForBackward& saved = layer.cost.saved;
    try {
      field = "output_bytes";
      s.output_bytes = checked_product(checked_product(batch, num_elements(layer.output_shape), "elements"),
                                       output_element_bytes(layer, dtype), "bytes");
      field = "saved_bytes";
      const int64_t extra_bytes_per_sample = checked_sum(
          checked_product(saved.extra_elements, bytes_per_element(dtype), "extra bytes"), saved.extra_bytes, "bytes");
      s.saved_bytes = checked_sum(output_kept_for_backward(model, i) ? s.output_bytes : 0,
                                  checked_product(batch, extra_bytes_per_sample, "extra bytes"), "bytes");
      stats.saved_bytes = checked_sum(stats.saved_bytes, s.saved_bytes, "the model's saved bytes");
      field = "params";
      stats.params = checked_sum(stats.params, s.params, "the model's parameters");
    } catch (const SizeOverflowError& e) {
      refuse(layer, e);
    }
    stats.forward_flops += s.forward_flops;
    stats.backward_flops += s.backward_input_flops + s.backward_weight_flops;
    stats.layers.push_back(s);
  }
  stats.param_bytes = checked_product(stats.params, bytes_per_element(dtype), "param_bytes");
  return stats;
}

}  // namespace splitbrain::model
