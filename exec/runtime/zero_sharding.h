#pragma once
// What the Trainer keeps for ZeRO on this rank (zero_sharding.cc): per gradient bucket of its
// stage, the slice it owns. Defined here so that every file of the Trainer sees the whole type.

#include <cstdint>
#include <vector>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

struct Trainer::ZeroState {
  struct Bucket {
    size_t index = 0;             // into compiled_.buckets
    int group = 1;
    int member = 0;               // this rank's index in the bucket's sync group
    int64_t slice_elements = 0;   // padded_elements / group
    TrackedArray grad_slice;      // stage >= 2: the reduced gradients of this rank's slice
    TrackedArray param_slice;     // stage 3: this rank's parameters (every layer's slice in turn)
    std::vector<int64_t> layer_offsets;  // stage 3: where each layer's slice starts, bucket order
    std::vector<int64_t> layer_slices;   // stage 3: round_up(layer elements, group) / group
  };
  std::vector<Bucket> buckets;         // this stage's, in the compiled order
  std::vector<int> bucket_of_layer;    // index into buckets, -1 for a layer ZeRO leaves whole
  std::vector<int> position_in_bucket;
};

}  // namespace splitbrain::exec
