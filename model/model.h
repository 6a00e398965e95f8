#pragma once
// A validated, immutable model: a DAG of layers in a topological order, with shapes and costs
// inferred. Build one with GraphBuilder (model/graph_builder.h), a zoo builder (model/zoo.h) or
// the JSON reader (model/model_json.h).

#include <boost/graph/adjacency_list.hpp>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/layer.h"

namespace splitbrain::model {

// Vertex i is layer i; an edge u -> v means layer v reads the output of layer u.
using LayerGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

class Model {
 public:
  Model(std::string name, std::vector<Layer> layers);

  const std::string& name() const { return name_; }
  // Layers in topological order: every layer comes after the layers it reads.
  std::span<const Layer> layers() const { return layers_; }
  const Layer& layer(int index) const { return layers_.at(static_cast<size_t>(index)); }
  int size() const { return static_cast<int>(layers_.size()); }
  // Index of the layer with this name, or -1.
  int find(std::string_view layer_name) const;
  const LayerGraph& graph() const { return graph_; }
  // Sum of trainable parameters (a tied weight counts once).
  int64_t parameter_count() const;
  // The embedding layer whose table layer `index` uses as its weight (GPT's lm_head reads wte's
  // table), or -1 when `index` is not a tied linear.
  int tied_table_layer(int index) const;
  // Each layer's class of alike layers (model/alike_layers.h). Worked out on first use, on any
  // thread, and kept: planning asks on every candidate, while reading a model file need not pay.
  std::span<const int> alike_classes() const;

 private:
  struct AlikeClasses {
    std::once_flag worked_out;
    std::vector<int> classes;
  };
  std::string name_;
  std::vector<Layer> layers_;
  LayerGraph graph_;
  std::shared_ptr<AlikeClasses> alike_ = std::make_shared<AlikeClasses>();
};

}  // namespace splitbrain::model
