#include "model/onnx/onnx_import.h"

#include <fmt/format.h>

#include "model/errors.h"
#include "model/model_file_readers.h"
#include "model/onnx/onnx_graph.h"
#include "model/onnx/onnx_import_state.h"
#include "model/onnx/onnx_node_mapping.h"
#include "model/onnx/onnx_patterns.h"

namespace splitbrain::model {
namespace {

using onnx_import::ImportState;
using onnx_import::OnnxGraph;

// Every graph output the net computes is trained: one that is not a loss already gets one.
void add_losses(const OnnxGraph& graph, ImportState& state) {
  for (const onnx::ValueInfoProto& output : graph.graph().output()) {
    if (!state.has_layer_for(output.name())) {
      throw ModelError(
          fmt::format("{}: graph output '{}' is not computed by an imported layer", graph.source(), output.name()));
    }
    const onnx::NodeProto& producer = graph.node(std::max(graph.producer(output.name()), 0));
    const std::string logits = state.layer_for(output.name(), producer);
    if (state.kind_of(logits) == OpKind::softmax_cross_entropy) continue;
    state.add_extra_layer("loss", OpKind::softmax_cross_entropy, NoAttrs{}, {logits});
  }
}

// Each layer's inferred shape must be what ONNX says its tensor holds: a mapping mistake, or an
// ONNX graph the mapping misreads, is caught here rather than priced.
void check_shapes(const OnnxGraph& graph, const ImportState& state, const Model& model) {
  for (const onnx_import::ShapeCheck& check : state.shape_checks()) {
    const Layer& layer = model.layer(model.find(check.layer));
    const std::optional<Shape> onnx_shape = graph.full_shape(check.tensor);
    // A loss is a scalar in ONNX; learned positions are one table lookup shared by the whole
    // batch, so their tensor has no batch dimension.
    const bool unbatched = layer.kind == OpKind::softmax_cross_entropy ||
                           (layer.kind == OpKind::embedding && layer.attr<EmbeddingAttrs>().positional);
    if (!onnx_shape || onnx_shape->empty() || unbatched) continue;
    const Shape per_sample(onnx_shape->begin() + 1, onnx_shape->end());
    if (per_sample != layer.output_shape) {
      throw ModelError(
          fmt::format("{}: layer '{}': imported as {} giving {} per sample, but ONNX says tensor '{}' is {}",
                      graph.source(), layer.name, op_name(layer.kind), shape_to_string(layer.output_shape),
                      check.tensor, shape_to_string(per_sample)));
    }
  }
}

Model import_graph(const OnnxGraph& graph, const std::string& name) {
  const onnx_import::GraphPatterns patterns = onnx_import::find_patterns(graph);
  ImportState state(graph);
  for (int i = 0; i < graph.node_count(); ++i) onnx_import::map_node(graph, patterns, i, state);
  add_losses(graph, state);

  GraphBuilder builder(name, graph.source());
  for (const LayerSpec& spec : state.specs()) builder.add(spec);
  Model model = builder.build();
  check_shapes(graph, state, model);
  return model;
}

}  // namespace

Model import_onnx_model(const std::filesystem::path& path) {
  return import_graph(OnnxGraph(path), path.stem().string());
}

Model import_onnx_model(const std::string& bytes, const std::string& name, const std::string& source) {
  return import_graph(OnnxGraph(bytes, source), name);
}

void register_onnx_model_reader() {
  register_model_file_reader(".onnx", [](const std::filesystem::path& path) { return import_onnx_model(path); });
}

}  // namespace splitbrain::model
