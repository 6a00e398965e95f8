#include "model/onnx/onnx_node_checks.h"

#include <onnx/defs/schema.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <string>

#include "model/errors.h"
#include "model/onnx/onnx_graph.h"

namespace splitbrain::model::onnx_import {
namespace {

// Window sizes past 32 bits describe no real net, and keep ONNX's arithmetic on them
// ((kernel - 1) x dilation, input + pads) inside 64 bits.
constexpr int64_t kLargestWindowValue = std::numeric_limits<int32_t>::max();

// The ops the importer maps to a 2-D window layer: their window attributes must be 2-D.
bool is_imported_window_op(const std::string& op) { return op == "Conv" || op == "MaxPool" || op == "AveragePool"; }

class NodeChecks {
 public:
  NodeChecks(const onnx::NodeProto& node, std::string_view source) : node_(node), source_(source) {}

  void check() const {
    const bool imported_window = is_imported_window_op(node_.op_type());
    for (const onnx::AttributeProto& attribute : node_.attribute()) {
      const std::string& name = attribute.name();
      if (name == "kernel_shape" || name == "strides" || name == "dilations") {
        check_ints(attribute, 1, imported_window ? 2 : -1);
      } else if (name == "pads") {
        check_ints(attribute, 0, imported_window ? 4 : -1);
      } else if (name == "auto_pad" && attribute.s() != "NOTSET") {
        refuse(name, fmt::format("'{}': only explicit pads (NOTSET) are imported", attribute.s()));
      } else if (imported_window && name == "group") {
        check_int(attribute, 1, kLargestWindowValue);
      } else if (imported_window && name == "ceil_mode") {
        check_int(attribute, 0, 1);
      }
    }
  }

 private:
  [[noreturn]] void refuse(std::string_view attribute, std::string_view problem) const {
    throw ModelError(fmt::format("{}: {}: {}: {}", source_, describe_node(node_), attribute, problem));
  }

  // Every value in [lowest, kLargestWindowValue]; `count` values unless it is -1.
  void check_ints(const onnx::AttributeProto& attribute, int64_t lowest, int count) const {
    const auto& values = attribute.ints();
    if (count >= 0 && values.size() != count) {
      refuse(attribute.name(),
             fmt::format("has {} values, not {}; only 2-D {} is imported", values.size(), count, node_.op_type()));
    }
    const bool in_range =
        std::all_of(values.begin(), values.end(), [&](int64_t v) { return v >= lowest && v <= kLargestWindowValue; });
    if (!in_range) {
      refuse(attribute.name(), fmt::format("[{}]: every value must be from {} to {}", fmt::join(values, ", "), lowest,
                                           kLargestWindowValue));
    }
  }

  void check_int(const onnx::AttributeProto& attribute, int64_t lowest, int64_t highest) const {
    if (attribute.i() < lowest || attribute.i() > highest) {
      refuse(attribute.name(), fmt::format("must be from {} to {}, got {}", lowest, highest, attribute.i()));
    }
  }

  const onnx::NodeProto& node_;
  std::string_view source_;
};

// The opset version of each domain the model imports ("" and "ai.onnx" are both ONNX's own).
using OpsetVersions = std::map<std::string, int64_t, std::less<>>;

std::string_view onnx_domain(std::string_view domain) { return domain == "ai.onnx" ? "" : domain; }

void check_graph(const onnx::GraphProto& graph, const OpsetVersions& opsets, std::string_view source) {
  for (const onnx::NodeProto& node : graph.node()) {
    const auto opset = opsets.find(onnx_domain(node.domain()));
    const onnx::OpSchema* schema = opset == opsets.end() || opset->second > std::numeric_limits<int>::max()
                                       ? nullptr
                                       : onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset->second),
                                                                        std::string(onnx_domain(node.domain())));
    if (schema == nullptr) {
      throw ModelError(fmt::format("{}: {}: ONNX op '{}' of domain '{}' is not in the opsets the model imports", source,
                                   describe_node(node), node.op_type(), node.domain()));
    }
    try {
      schema->Verify(node);
    } catch (const std::exception& e) {
      throw ModelError(
          fmt::format("{}: {}: does not match the op's ONNX schema: {}", source, describe_node(node), e.what()));
    }
    NodeChecks(node, source).check();
    // Shape inference goes into the bodies of If, Loop and Scan too.
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) check_graph(attribute.g(), opsets, source);
      for (const onnx::GraphProto& body : attribute.graphs()) check_graph(body, opsets, source);
    }
  }
}

}  // namespace

void check_nodes_before_inference(const onnx::ModelProto& model, std::string_view source) {
  OpsetVersions opsets;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    opsets[std::string(onnx_domain(opset.domain()))] = opset.version();
  }
  check_graph(model.graph(), opsets, source);
}

}  // namespace splitbrain::model::onnx_import
