#pragma once
// One ONNX node -> at most one layer of ours (model/README.md lists the mapping). Nodes folded
// into a pattern (model/onnx/onnx_patterns.h) make their pattern's layer at the node giving its
// output; constants make nothing. Anything else is refused with a ModelError naming the file,
// the node and its op type.

#include "model/onnx/onnx_graph.h"
#include "model/onnx/onnx_import_state.h"
#include "model/onnx/onnx_patterns.h"

namespace splitbrain::model::onnx_import {

void map_node(const OnnxGraph& graph, const GraphPatterns& patterns, int node_index, ImportState& state);

}  // namespace splitbrain::model::onnx_import
