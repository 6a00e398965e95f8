#pragma once
// Deep models repeat identical blocks: the layers of block 7 are those of block 8 but for their
// names and indices. Whatever depends only on a layer's op, attributes and shapes (its layouts
// under a sharding, its price, the redistribution between two such layers) can be worked out once
// per class of alike layers. Planning a 175B GPT compiles a thousand candidate plans of 96 blocks.

#include <vector>

#include "model/model.h"

namespace splitbrain::model {

// A class number per layer: two layers share one exactly when they have the same op, attributes,
// output shape, input shapes, token flags, parameter count and whether their input needs a
// gradient. Classes are numbered in the order of their first layer (0, 1, 2, ...).
std::vector<int> alike_layer_classes(const Model& net);

}  // namespace splitbrain::model
