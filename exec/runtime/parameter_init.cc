#include "exec/runtime/parameter_init.h"

#include <cmath>

#include "exec/data/seeded_hash.h"

namespace splitbrain::exec {
namespace {

double uniform(uint64_t key, uint64_t index) { return static_cast<double>(data::mix64(key ^ index) >> 11) * 0x1.0p-53; }

// Fan-in of a conv or linear layer (both its weight and its bias use 1 / sqrt(fan_in)).
double fan_in(const model::Layer& layer) {
  if (layer.kind == model::OpKind::linear) return static_cast<double>(layer.attr<model::LinearAttrs>().in_features);
  // A conv's fan-in is in_channels / groups x kernel area: its weights per output channel.
  const auto& a = layer.attr<model::Conv2dAttrs>();
  const int64_t weights = layer.cost.params - (a.bias ? a.out_channels : 0);
  return static_cast<double>(weights / a.out_channels);
}

}  // namespace

void initialize_parameter(const model::Layer& layer, int layer_index, int parameter, const plans::ParameterShard& shard,
                          const std::vector<int64_t>& block_offset, uint64_t seed, comm::LocalArray& local) {
  const uint64_t key = data::hash_keys(seed, {static_cast<uint64_t>(layer_index), static_cast<uint64_t>(parameter)});
  double scale = 0.0;
  double constant = 0.0;
  switch (layer.kind) {
    case model::OpKind::conv2d:
    case model::OpKind::linear:
      scale = 1.0 / std::sqrt(fan_in(layer));
      break;
    case model::OpKind::batchnorm:
    case model::OpKind::layernorm:
      constant = parameter == 0 ? 1.0 : 0.0;
      break;
    case model::OpKind::embedding:
      scale = 0.02 * std::sqrt(3.0);
      break;
    default:
      break;
  }
  // Walk the local block row-major and map each element to its global row-major index.
  const auto& global = shard.global_shape;
  const auto& shape = local.shape;
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  for (size_t i = 0; i < local.values.size(); ++i) {
    uint64_t g = 0;
    for (size_t d = 0; d < rank; ++d)
      g = g * static_cast<uint64_t>(global[d]) + static_cast<uint64_t>(block_offset[d] + index[d]);
    local.values[i] = scale > 0 ? static_cast<float>((2 * uniform(key, g) - 1) * scale) : static_cast<float>(constant);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace splitbrain::exec
