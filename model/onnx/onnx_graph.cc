#include "model/onnx/onnx_graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <limits>

#include "model/errors.h"
#include "model/file_io.h"
#include "model/onnx/onnx_node_checks.h"

namespace splitbrain::model::onnx_import {
namespace {

const std::vector<int> kNoConsumers;

// Values stored little-endian in raw_data (the ONNX spec's layout), or in the typed field.
template <class Stored, class Out>
std::vector<Out> raw_values(const onnx::TensorProto& tensor, std::string_view what) {
  const std::string& raw = tensor.raw_data();
  if (raw.size() % sizeof(Stored) != 0) {
    throw ModelError(fmt::format("{}: raw_data holds {} bytes, not a whole number of elements", what, raw.size()));
  }
  std::vector<Out> values(raw.size() / sizeof(Stored));
  for (size_t i = 0; i < values.size(); ++i) {
    Stored v;
    std::memcpy(&v, raw.data() + i * sizeof(Stored), sizeof(Stored));
    values[i] = static_cast<Out>(v);
  }
  return values;
}

template <class Out>
std::vector<Out> convert(const onnx::TensorProto& tensor, std::string_view what) {
  const bool raw = tensor.has_raw_data();
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      return raw ? raw_values<float, Out>(tensor, what)
                 : std::vector<Out>(tensor.float_data().begin(), tensor.float_data().end());
    case onnx::TensorProto::DOUBLE:
      return raw ? raw_values<double, Out>(tensor, what)
                 : std::vector<Out>(tensor.double_data().begin(), tensor.double_data().end());
    case onnx::TensorProto::INT64:
      return raw ? raw_values<int64_t, Out>(tensor, what)
                 : std::vector<Out>(tensor.int64_data().begin(), tensor.int64_data().end());
    case onnx::TensorProto::INT32:
      return raw ? raw_values<int32_t, Out>(tensor, what)
                 : std::vector<Out>(tensor.int32_data().begin(), tensor.int32_data().end());
    case onnx::TensorProto::BOOL:
      return raw ? raw_values<uint8_t, Out>(tensor, what)
                 : std::vector<Out>(tensor.int32_data().begin(), tensor.int32_data().end());
    default:
      throw ModelError(fmt::format("{}: element type {} is not read by the importer", what, tensor.data_type()));
  }
}

}  // namespace

std::vector<int64_t> tensor_ints(const onnx::TensorProto& tensor, std::string_view what) {
  return convert<int64_t>(tensor, what);
}

std::vector<double> tensor_doubles(const onnx::TensorProto& tensor, std::string_view what) {
  return convert<double>(tensor, what);
}

OnnxGraph::OnnxGraph(const std::filesystem::path& path) : OnnxGraph(read_text_file(path), path.string()) {}

OnnxGraph::OnnxGraph(const std::string& bytes, std::string source) : source_(std::move(source)) {
  if (!model_.ParseFromString(bytes) || !model_.has_graph()) {
    throw ModelError(fmt::format("{}: not an ONNX model (the file does not parse as an ONNX ModelProto)", source_));
  }
  if (model_.graph().node_size() == 0) throw ModelError(fmt::format("{}: the ONNX graph has no nodes", source_));
  check_nodes_before_inference(model_, source_);
  try {
    // Data propagation evaluates the shape arithmetic PyTorch writes for view() (Concat of
    // Unsqueeze of constants), so the shapes after such a Reshape are known too.
    const onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    throw ModelError(fmt::format("{}: ONNX shape inference failed: {}", source_, e.what()));
  }
  index_nodes();
  index_shapes();
  find_constants();
}

void OnnxGraph::index_nodes() {
  for (const onnx::TensorProto& init : graph().initializer()) stored_[init.name()] = &init;
  for (const onnx::ValueInfoProto& input : graph().input()) {
    if (stored_.count(input.name()) == 0) data_inputs_[input.name()] = &input;
  }
  for (const onnx::ValueInfoProto& output : graph().output()) outputs_.insert(output.name());
  for (int i = 0; i < node_count(); ++i) {
    const onnx::NodeProto& n = node(i);
    for (const std::string& input : n.input()) {
      if (!input.empty()) consumers_[input].push_back(i);
    }
    for (const std::string& output : n.output()) {
      if (!output.empty()) producer_[output] = i;
    }
    if (n.op_type() == "Constant") {
      for (const onnx::AttributeProto& attribute : n.attribute()) {
        if (attribute.name() == "value" && attribute.has_t() && n.output_size() == 1)
          stored_[n.output(0)] = &attribute.t();
      }
    }
  }
}

void OnnxGraph::index_shapes() {
  auto record = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    Shape shape;
    for (const onnx::TensorShapeProto::Dimension& dim : info.type().tensor_type().shape().dim()) {
      const bool known = dim.has_dim_value() && dim.dim_value() > 0;
      // The batch may be symbolic (dynamic_axes={"input": {0: "batch"}}); it is dropped anyway.
      if (!known && !shape.empty()) return;
      shape.push_back(known ? dim.dim_value() : kUnknownBatch);
    }
    shapes_[info.name()] = shape;
  };
  for (const auto& info : graph().input()) record(info);
  for (const auto& info : graph().value_info()) record(info);
  for (const auto& info : graph().output()) record(info);
  for (const auto& [name, tensor] : stored_) shapes_[name] = Shape(tensor->dims().begin(), tensor->dims().end());
}

void OnnxGraph::find_constants() {
  for (const auto& [name, tensor] : stored_) constants_.insert(name);
  // ONNX lists nodes in a topological order, so one pass sees every input before its readers.
  for (int i = 0; i < node_count(); ++i) {
    const onnx::NodeProto& n = node(i);
    const bool reads_shape_only = n.op_type() == "Shape" || n.op_type() == "Size";
    bool all_constant = true;
    for (const std::string& input : n.input()) {
      if (!input.empty() && constants_.count(input) == 0) all_constant = false;
    }
    const bool embedding_lookup = n.op_type() == "Gather" && n.input_size() == 2 && stored_.count(n.input(0)) != 0 &&
                                  stored_.at(n.input(0))->dims_size() == 2;
    if ((all_constant || reads_shape_only) && !embedding_lookup) {
      for (const std::string& output : n.output()) constants_.insert(output);
    }
  }
}

std::string describe_node(const onnx::NodeProto& n) {
  return fmt::format("node '{}' ({})", n.name().empty() ? (n.output_size() > 0 ? n.output(0) : "") : n.name(),
                     n.op_type());
}

int OnnxGraph::producer(std::string_view tensor) const {
  const auto it = producer_.find(std::string(tensor));
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& OnnxGraph::consumers(std::string_view tensor) const {
  const auto it = consumers_.find(std::string(tensor));
  return it == consumers_.end() ? kNoConsumers : it->second;
}

bool OnnxGraph::is_graph_output(std::string_view tensor) const { return outputs_.count(std::string(tensor)) != 0; }

const onnx::ValueInfoProto* OnnxGraph::data_input(std::string_view tensor) const {
  const auto it = data_inputs_.find(std::string(tensor));
  return it == data_inputs_.end() ? nullptr : it->second;
}

bool OnnxGraph::is_constant(std::string_view tensor) const { return constants_.count(std::string(tensor)) != 0; }

const onnx::TensorProto* OnnxGraph::stored_tensor(std::string_view tensor) const {
  const auto it = stored_.find(std::string(tensor));
  return it == stored_.end() ? nullptr : it->second;
}

std::optional<WeightSource> OnnxGraph::weight_matrix(std::string_view tensor) const {
  if (const onnx::TensorProto* stored = stored_tensor(tensor)) {
    if (stored->dims_size() == 2) return WeightSource{stored, false};
    return std::nullopt;
  }
  const int p = producer(tensor);
  if (p < 0 || node(p).op_type() != "Transpose" || node(p).input_size() != 1) return std::nullopt;
  const onnx::TensorProto* stored = stored_tensor(node(p).input(0));
  if (stored == nullptr || stored->dims_size() != 2) return std::nullopt;
  // A 2-D Transpose without perm reverses the dimensions; perm [1, 0] says the same.
  for (const onnx::AttributeProto& attribute : node(p).attribute()) {
    if (attribute.name() == "perm" &&
        !(attribute.ints_size() == 2 && attribute.ints(0) == 1 && attribute.ints(1) == 0)) {
      return std::nullopt;
    }
  }
  return WeightSource{stored, true};
}

std::optional<Shape> OnnxGraph::full_shape(std::string_view tensor) const {
  const auto it = shapes_.find(std::string(tensor));
  if (it == shapes_.end()) return std::nullopt;
  return it->second;
}

Shape OnnxGraph::per_sample_shape(std::string_view tensor, const onnx::NodeProto& n) const {
  const std::optional<Shape> shape = full_shape(tensor);
  if (!shape || shape->empty()) {
    throw ModelError(fmt::format("{}: {}: the shape of tensor '{}' is unknown (export with fixed input sizes)", source_,
                                 describe(n), tensor));
  }
  return Shape(shape->begin() + 1, shape->end());
}

}  // namespace splitbrain::model::onnx_import
