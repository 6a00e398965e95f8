#pragma once
// An ONNX file read for import: the protobuf parsed, shapes inferred (onnx::shape_inference), and
// indexes the importer asks about: who produces and who reads each tensor, which tensors are
// constants (weights, Constant nodes, and what is computed from them or from shapes only), and
// the full shape (batch dimension included) of each tensor where the file or inference knows it.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/shape.h"

namespace splitbrain::model::onnx_import {

// The first dimension of a full shape whose batch size is symbolic.
constexpr int64_t kUnknownBatch = 0;

// A weight matrix a MatMul reads: an initializer, possibly through a Transpose node.
struct WeightSource {
  const onnx::TensorProto* tensor = nullptr;
  bool transposed = false;
};

// "node '/layer1/Conv' (Conv)": how errors name a node (its first output when it has no name).
std::string describe_node(const onnx::NodeProto& node);

class OnnxGraph {
 public:
  // Throws InputError naming the file when it cannot be read, is not an ONNX model, holds a
  // node shape inference cannot take (onnx_node_checks.h), or fails shape inference.
  explicit OnnxGraph(const std::filesystem::path& path);
  // The same for a file's bytes already read; `source` names them in errors.
  OnnxGraph(const std::string& bytes, std::string source);

  const std::string& source() const { return source_; }
  const onnx::GraphProto& graph() const { return model_.graph(); }
  int node_count() const { return graph().node_size(); }
  const onnx::NodeProto& node(int index) const { return graph().node(index); }
  std::string describe(const onnx::NodeProto& node) const { return describe_node(node); }

  // Index of the node producing a tensor, or -1 (graph inputs, initializers).
  int producer(std::string_view tensor) const;
  // Indices of the nodes reading a tensor, in graph order.
  const std::vector<int>& consumers(std::string_view tensor) const;
  bool is_graph_output(std::string_view tensor) const;
  // A graph input that is not an initializer (training data).
  const onnx::ValueInfoProto* data_input(std::string_view tensor) const;

  // Weights, Constant outputs, and tensors computed only from constants and shapes: folded away,
  // never a layer. Embedding lookups (Gather from a 2-D initializer) are not constants.
  bool is_constant(std::string_view tensor) const;
  // The stored value of an initializer or a Constant node's output, or nullptr.
  const onnx::TensorProto* stored_tensor(std::string_view tensor) const;
  // A weight matrix (rank 2), read directly or through a Transpose with perm [1, 0].
  std::optional<WeightSource> weight_matrix(std::string_view tensor) const;

  // The full shape (batch first) when every dimension is known but perhaps the batch
  // (kUnknownBatch then), else nullopt.
  std::optional<Shape> full_shape(std::string_view tensor) const;
  // The full shape with the batch dimension dropped; throws naming `node` when unknown.
  Shape per_sample_shape(std::string_view tensor, const onnx::NodeProto& node) const;

 private:
  void index_nodes();
  void index_shapes();
  void find_constants();

  std::string source_;
  onnx::ModelProto model_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_map<std::string, const onnx::TensorProto*> stored_;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> data_inputs_;
  std::unordered_set<std::string> outputs_;
  std::unordered_set<std::string> constants_;
  std::unordered_map<std::string, Shape> shapes_;
};

// Values of a stored tensor (raw_data or the typed fields), converted; throw naming `what`.
std::vector<int64_t> tensor_ints(const onnx::TensorProto& tensor, std::string_view what);
std::vector<double> tensor_doubles(const onnx::TensorProto& tensor, std::string_view what);

}  // namespace splitbrain::model::onnx_import
