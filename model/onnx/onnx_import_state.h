#pragma once
// The layers made so far while importing an ONNX graph, and which layer of ours gives each ONNX
// tensor. Layers are named after their ONNX nodes; data inputs become input layers when a node
// first reads them, so inputs only a loss reads (labels) never appear.

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/graph_builder.h"
#include "model/onnx/onnx_graph.h"

namespace splitbrain::model::onnx_import {

// A layer whose output should have the shape ONNX inferred for `tensor`: checked after building.
struct ShapeCheck {
  std::string tensor;
  std::string layer;
};

class ImportState {
 public:
  explicit ImportState(const OnnxGraph& graph) : graph_(graph) {}

  // The layer giving `tensor`; throws naming `reader` when no mapped node computes it.
  std::string layer_for(const std::string& tensor, const onnx::NodeProto& reader);
  // The input layer of the token ids (the one integer data input), for positional embeddings.
  std::string token_input_layer(const onnx::NodeProto& reader);
  // Adds a layer named after `node` that gives `output_tensor`; returns its name.
  std::string add_layer(const onnx::NodeProto& node, OpKind kind, OpAttrs attrs, std::vector<std::string> inputs,
                        const std::string& output_tensor);
  // Adds a layer that stands for no ONNX tensor (the loss the importer appends).
  std::string add_extra_layer(const std::string& base_name, OpKind kind, OpAttrs attrs,
                              std::vector<std::string> inputs);
  // `tensor` is the same values as the output of `layer` (Identity, a no-op Reshape...).
  void alias(const std::string& tensor, const std::string& layer) { layer_of_tensor_[tensor] = layer; }
  bool has_layer_for(const std::string& tensor) const { return layer_of_tensor_.count(tensor) != 0; }
  OpKind kind_of(const std::string& layer) const;

  // Embeddings by the initializer holding their table, to find output heads tied to them.
  void note_embedding_table(const std::string& initializer, const std::string& layer) {
    embedding_of_table_[initializer] = layer;
  }
  std::string embedding_with_table(const std::string& initializer) const;
  const std::unordered_map<std::string, std::string>& embedding_tables() const { return embedding_of_table_; }

  const std::vector<LayerSpec>& specs() const { return specs_; }
  const std::vector<ShapeCheck>& shape_checks() const { return shape_checks_; }

 private:
  std::string unique_name(const std::string& base);

  const OnnxGraph& graph_;
  std::vector<LayerSpec> specs_;
  std::unordered_map<std::string, std::string> layer_of_tensor_;
  std::unordered_map<std::string, size_t> spec_of_layer_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, std::string> embedding_of_table_;
  std::vector<ShapeCheck> shape_checks_;
};

}  // namespace splitbrain::model::onnx_import
