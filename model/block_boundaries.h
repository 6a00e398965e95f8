#pragma once
// Where a model's graph narrows to one tensor: the boundaries of its blocks (a transformer's
// layers, a residual network's blocks; every layer of a chain). Pipeline stages start at them
// (one tensor crosses a cut) and recomputation by blocks counts them.

#include <vector>

#include "model/model.h"

namespace splitbrain::model {

// last[u]: the highest index of a layer that reads u's output (-1 when none does).
std::vector<int> last_readers(const Model& model);

// starts[i] (i >= 1): exactly one tensor produced before layer i is read at or after it; starts[0]
// is false.
std::vector<bool> block_starts(const Model& model);

}  // namespace splitbrain::model
