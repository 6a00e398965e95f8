#pragma once
// Attribute values checked before ONNX's shape inference sees them. ONNX 1.12's inference trusts
// them: it divides by `strides` (a stride of 0 kills the process with SIGFPE), and with an
// `auto_pad` it counts a dimension down stride by stride (hours for a huge dimension). So every
// node, of any op and in any subgraph, is checked first, and bad values are refused by name.

#include <onnx/onnx_pb.h>

#include <string_view>

namespace splitbrain::model::onnx_import {

// Throws ModelError "<source>: node '<name>' (<op>): <attribute>: <problem>" for the first
// window attribute (kernel_shape, strides, dilations, pads, group, ceil_mode, auto_pad) whose
// value the importer cannot take.
void check_attributes_before_inference(const onnx::GraphProto& graph, std::string_view source);

}  // namespace splitbrain::model::onnx_import
