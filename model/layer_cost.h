#pragma once
// Parameters, FLOPs and saved-for-backward tensors of one layer, per sample.
//
// Conventions (also in model/README.md):
//  - a multiply-add is 2 FLOPs;
//  - conv2d and linear: forward = 2 x MACs (+1 per output for the bias); input gradient =
//    2 x MACs; weight gradient = 2 x MACs (+1 per output for the bias gradient);
//  - cheap elementwise and normalisation ops are counted with the small per-element constants
//    in layer_cost.cc; they matter for memory traffic, not for FLOPs;
//  - a layer whose inputs need no gradient (nothing upstream is trainable) gets no input
//    gradient FLOPs: frameworks skip that computation.

#include <span>

#include "model/layer.h"

namespace splitbrain::model {

// Needs layer.output_shape, layer.needs_input_gradient and its producers' shapes to be set.
LayerCost compute_layer_cost(const Layer& layer, std::span<const Layer* const> producers);

}  // namespace splitbrain::model
