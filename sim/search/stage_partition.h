#pragma once
// Pipeline stages by dynamic programming over contiguous layer ranges (Akintoye et al.'s
// layer-wise partition and merge): cut the layer sequence into S stages so that the slowest
// stage is as fast as possible, counting the hand-over at every cut and respecting each
// stage's memory (stage s of 1F1B keeps S - s micro-batches of activations in flight).

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "model/model.h"

namespace splitbrain::sim {

struct StagePartitionInput {
  std::vector<double> layer_seconds;            // per micro-batch, forward + backward, per layer
  std::vector<int64_t> layer_fixed_bytes;       // parameters, gradients, optimizer state
  std::vector<int64_t> layer_activation_bytes;  // kept activations of one micro-batch
  // cut_seconds[i]: the hand-over if a stage starts at layer i (activations forward, gradients
  // back, for every tensor produced before i and read at or after i); cut_seconds[0] unused.
  std::vector<double> cut_seconds;
  int stages = 1;
  int micro_batches = 1;
  bool one_f_one_b = true;  // else GPipe: every stage keeps all micro-batches
  int64_t memory_limit_bytes = std::numeric_limits<int64_t>::max();
  // may_start_stage[i]: a stage may start at layer i (empty: any layer may).
  std::vector<bool> may_start_stage;
};

// Where a stage may start: the layers before which exactly one tensor crosses (a transformer's
// or a residual network's block boundaries; every layer of a chain), so a pipeline never cuts
// through a block, as Megatron-LM's stages do not. When there are fewer such layers than the
// stages need, every layer (a model too small to cut between blocks).
std::vector<bool> stage_starts_between_blocks(const model::Model& model, int stages);

// The stage of each layer (non-decreasing, all stages non-empty) minimising the slowest stage,
// or nullopt when no partition fits in memory (or there are fewer layers than stages).
std::optional<std::vector<int>> partition_stages(const StagePartitionInput& input);

}  // namespace splitbrain::sim
