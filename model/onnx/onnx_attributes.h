#pragma once
// Reading a node's attributes with ONNX's defaults, and its constant inputs (Dropout's ratio).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/onnx/onnx_graph.h"

namespace splitbrain::model::onnx_import {

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, std::string_view name);
int64_t int_attribute(const onnx::NodeProto& node, std::string_view name, int64_t fallback);
double float_attribute(const onnx::NodeProto& node, std::string_view name, double fallback);
std::string string_attribute(const onnx::NodeProto& node, std::string_view name, std::string fallback);
std::vector<int64_t> ints_attribute(const onnx::NodeProto& node, std::string_view name, std::vector<int64_t> fallback);

// Dropout's probability: input 1 (opset 12 on) or the `ratio` attribute (older), 0.5 by default.
double dropout_ratio(const OnnxGraph& graph, const onnx::NodeProto& node);

}  // namespace splitbrain::model::onnx_import
