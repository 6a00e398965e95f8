#include "model/onnx/onnx_attributes.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace splitbrain::model::onnx_import {

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a == nullptr ? fallback : a->i();
}

double float_attribute(const onnx::NodeProto& node, std::string_view name, double fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a == nullptr ? fallback : static_cast<double>(a->f());
}

std::string string_attribute(const onnx::NodeProto& node, std::string_view name, std::string fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a == nullptr ? fallback : a->s();
}

std::vector<int64_t> ints_attribute(const onnx::NodeProto& node, std::string_view name, std::vector<int64_t> fallback) {
  const onnx::AttributeProto* a = find_attribute(node, name);
  return a == nullptr ? fallback : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

double dropout_ratio(const OnnxGraph& graph, const onnx::NodeProto& node) {
  if (node.input_size() >= 2 && !node.input(1).empty()) {
    const onnx::TensorProto* ratio = graph.stored_tensor(node.input(1));
    if (ratio == nullptr) {
      throw ModelError(
          fmt::format("{}: {}: the dropout ratio is not a constant", graph.source(), graph.describe(node)));
    }
    const std::vector<double> values =
        tensor_doubles(*ratio, fmt::format("{}: {}: ratio", graph.source(), graph.describe(node)));
    if (values.size() != 1) {
      throw ModelError(fmt::format("{}: {}: the dropout ratio has {} values, not 1", graph.source(),
                                   graph.describe(node), values.size()));
    }
    return values[0];
  }
  return float_attribute(node, "ratio", 0.5);
}

}  // namespace splitbrain::model::onnx_import
