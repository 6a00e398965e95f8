#pragma once
// Which layers full recomputation reruns: every layer of each pipeline chunk (Plan::
// recompute_activations), or with Plan::recompute_blocks = N only those of the chunk's first N
// blocks (model/block_boundaries.h), Megatron-LM's --recompute-method block; the rest keep their
// activations. The step compiler drops and reruns these, the simulator counts what they send
// again: one decision, read by both. Under recompute_blocks N > 0 each of those blocks is
// checkpointed on its own (Megatron-LM's block method; torchtitan's activation checkpointing
// wraps every layer so): its input is kept, and it runs forward again right before its own
// backward. Under 0 the chunk reruns as one from its input alone.

#include <vector>

#include "plans/plan.h"

namespace splitbrain::plans {

// Per layer: dropped after its forward and recomputed before its backward. Input layers never
// are (a chunk's input is what recomputation starts from).
std::vector<bool> recomputed_layers(const Plan& plan);

// Per layer: the number of its block within its pipeline chunk, from 1 (a chunk's first layer
// begins one): recomputation reruns one block at a time.
std::vector<int> block_number_in_chunk(const Plan& plan);

// The most blocks any chunk of `plan` holds (a chunk's first layer begins a block): the largest
// recompute_blocks that leaves some chunk's activations kept is one less.
int most_blocks_in_a_chunk(const Plan& plan);

}  // namespace splitbrain::plans
