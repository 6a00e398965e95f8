#include "exec/runtime/parameter_init.h"

#include "exec/data/seeded_hash.h"
#include "model/op_unit.h"

namespace splitbrain::exec {
namespace {

double uniform(uint64_t key, uint64_t index) { return static_cast<double>(data::mix64(key ^ index) >> 11) * 0x1.0p-53; }

}  // namespace

void initialize_parameter(const model::Layer& layer, int layer_index, int parameter, const plans::ParameterShard& shard,
                          const std::vector<int64_t>& block_offset, uint64_t seed, comm::LocalArray& local) {
  const uint64_t key = data::hash_keys(seed, {static_cast<uint64_t>(layer_index), static_cast<uint64_t>(parameter)});
  // The op's unit says how its parameters start (model/op_unit.h); ops without parameters never get here.
  const model::OpUnit& unit = model::op_unit(layer.kind);
  const model::ParameterInit init =
      unit.parameter_init ? unit.parameter_init(layer, parameter) : model::ParameterInit{};
  const double scale = init.uniform_bound;
  const double constant = init.constant;
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
