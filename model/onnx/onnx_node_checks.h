#pragma once
// Nodes checked before ONNX's shape inference, and the importer, read them. Both trust a node:
// ONNX 1.12's inference divides by `strides` (a stride of 0 kills the process with SIGFPE) and,
// with an `auto_pad`, counts a dimension down stride by stride (hours for a huge dimension); both
// read a node's inputs and outputs by position. So every node, in any subgraph, is first checked
// against its op's ONNX schema (how many inputs and outputs, attribute types), then its window
// attributes against what the importer takes, and a bad one is refused by name.

#include <onnx/onnx_pb.h>

#include <string_view>

namespace splitbrain::model::onnx_import {

// Throws ModelError "<source>: node '<name>' (<op>): <attribute or schema>: <problem>" for the
// first node of an op ONNX does not define, that its schema refuses, or whose window attribute
// (kernel_shape, strides, dilations, pads, group, ceil_mode, auto_pad) the importer cannot take.
void check_nodes_before_inference(const onnx::ModelProto& model, std::string_view source);

}  // namespace splitbrain::model::onnx_import
