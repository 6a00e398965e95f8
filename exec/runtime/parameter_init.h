#pragma once
// Initial parameters that do not depend on the plan: every element of a parameter's GLOBAL
// tensor is a function of (seed, layer, parameter, global index), and each rank takes its block.
// So a plan on 4 ranks starts from exactly the weights of the 1-rank run, which is what makes
// the equivalence tests possible. tools/pytorch_golden.py computes the same values in Python.
//
//   u(g)   = (splitmix64(key ^ g) >> 11) * 2^-53           uniform in [0, 1)
//   key    = splitmix64(splitmix64(splitmix64(seed) ^ layer) ^ parameter)
//   (splitmix64 = SplitMix64's finaliser, exec/data/seeded_hash.h's mix64)
//   conv2d, linear (weight and bias): (2u - 1) / sqrt(fan_in)   (PyTorch's default bounds)
//   batchnorm, layernorm: weight 1, bias 0
//   embedding: (2u - 1) * 0.02 * sqrt(3)                    (uniform with std 0.02, as GPT-2)

#include <cstdint>

#include "exec/comm/local_array.h"
#include "model/layer.h"
#include "plans/op_sharding.h"

namespace splitbrain::exec {

// Fills `local` (shaped as the rank's block of `shard`) for parameter `parameter` of `layer`.
void initialize_parameter(const model::Layer& layer, int layer_index, int parameter, const plans::ParameterShard& shard,
                          const std::vector<int64_t>& block_offset, uint64_t seed, comm::LocalArray& local);

}  // namespace splitbrain::exec
