#pragma once
// A layer's model states on this rank: its parameter shards and their gradients, one array per
// parameter tensor. ZeRO leaves some of them empty between uses (exec/runtime/zero_sharding.h).

#include <vector>

#include "exec/runtime/tracked_array.h"

namespace splitbrain::exec {

struct LayerParameters {
  std::vector<TrackedArray> values;
  std::vector<TrackedArray> grads;
};

}  // namespace splitbrain::exec
