#include "model/onnx/onnx_node_mapping.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "model/errors.h"
#include "model/onnx/onnx_attributes.h"

namespace splitbrain::model::onnx_import {
namespace {

// Whether a weight matrix holds the same values as an embedding's table [V, D]: a head stored
// [V, D] (read through a Transpose) or [D, V] (constant folding already transposed it).
bool same_values_as_table(const WeightSource& weight, const onnx::TensorProto& table) {
  const onnx::TensorProto& w = *weight.tensor;
  if (w.data_type() != onnx::TensorProto::FLOAT || table.data_type() != onnx::TensorProto::FLOAT || !w.has_raw_data() ||
      !table.has_raw_data() || w.raw_data().size() != table.raw_data().size()) {
    return false;
  }
  const int64_t rows = table.dims(0);
  const int64_t columns = table.dims(1);
  if (weight.transposed) return w.dims(0) == rows && w.dims(1) == columns && w.raw_data() == table.raw_data();
  if (w.dims(0) != columns || w.dims(1) != rows) return false;
  // Compared in place, element by element: a vocabulary table can be hundreds of megabytes.
  const auto element = [](const std::string& raw, int64_t index) {
    float value;
    std::memcpy(&value, raw.data() + index * static_cast<int64_t>(sizeof(float)), sizeof(float));
    return value;
  };
  for (int64_t v = 0; v < rows; ++v) {
    for (int64_t d = 0; d < columns; ++d) {
      if (element(w.raw_data(), d * rows + v) != element(table.raw_data(), v * columns + d)) return false;
    }
  }
  return true;
}

class NodeMapper {
 public:
  NodeMapper(const OnnxGraph& graph, const GraphPatterns& patterns, int index, ImportState& state)
      : graph_(graph), patterns_(patterns), index_(index), node_(graph.node(index)), state_(state) {}

  void map();

 private:
  [[noreturn]] void refuse(std::string_view problem) const {
    throw ModelError(fmt::format("{}: {}: {}", graph_.source(), graph_.describe(node_), problem));
  }
  std::string input_layer(int position) const { return state_.layer_for(node_.input(position), node_); }
  void emit(OpKind kind, OpAttrs attrs, std::vector<std::string> inputs) {
    state_.add_layer(node_, kind, std::move(attrs), std::move(inputs), node_.output(0));
  }
  void emit_unary(OpKind kind, OpAttrs attrs) { emit(kind, std::move(attrs), {input_layer(0)}); }
  // A 2-D window attribute pair, e.g. strides [2, 2] -> {2, 2}; only 2-D ops are imported.
  Size2 window(std::string_view name, std::vector<int64_t> fallback) const;
  // ONNX pads are [top, left, bottom, right]; ours are symmetric.
  Size2 symmetric_padding() const;

  void map_region(const NodeRegion& region);
  void map_conv();
  void map_gemm();
  void map_matmul();
  void map_add();
  std::string folded_positions(const std::string& constant, const std::string& other);
  void map_pool(bool max);
  void map_flatten();
  void map_reshape();
  void map_gather();
  void map_output_softmax();

  const OnnxGraph& graph_;
  const GraphPatterns& patterns_;
  int index_;
  const onnx::NodeProto& node_;
  ImportState& state_;
};

Size2 NodeMapper::window(std::string_view name, std::vector<int64_t> fallback) const {
  const std::vector<int64_t> values = ints_attribute(node_, name, std::move(fallback));
  if (values.size() != 2) refuse(fmt::format("{}: has {} values; only 2-D ops are imported", name, values.size()));
  return {values[0], values[1]};
}

Size2 NodeMapper::symmetric_padding() const {
  if (string_attribute(node_, "auto_pad", "NOTSET") != "NOTSET") refuse("auto_pad: only explicit pads are imported");
  const std::vector<int64_t> pads = ints_attribute(node_, "pads", {0, 0, 0, 0});
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) {
    refuse(fmt::format("pads: [{}] is not the same on both sides", fmt::join(pads, ", ")));
  }
  return {pads[0], pads[1]};
}

void NodeMapper::map_region(const NodeRegion& region) {
  // The region's layer is made where its output is computed; its other nodes make nothing.
  if (graph_.producer(region.output) != index_) return;
  const onnx::NodeProto& named = graph_.node(region.named_after);
  std::vector<std::string> inputs{state_.layer_for(region.input, named)};
  if (region.kind == OpKind::gelu) {
    state_.add_layer(named, OpKind::gelu, NoAttrs{}, inputs, region.output);
    return;
  }
  if (region.kind == OpKind::rms_norm) {
    state_.add_layer(named, OpKind::rms_norm, region.rms_norm, inputs, region.output);
    return;
  }
  if (region.kind == OpKind::swiglu) {
    inputs.push_back(state_.layer_for(region.second_input, named));
    state_.add_layer(named, OpKind::swiglu, NoAttrs{}, inputs, region.output);
    return;
  }
  if (region.fused_projection) {
    const onnx::NodeProto& first = graph_.node(region.projection_named_after);
    inputs = {state_.add_extra_layer(first.name().empty() ? first.output(0) : first.name(), OpKind::linear,
                                     *region.fused_projection, inputs)};
  }
  state_.add_layer(named, OpKind::self_attention, region.attention, inputs, region.output);
}

void NodeMapper::map_conv() {
  const onnx::TensorProto* weight = graph_.stored_tensor(node_.input(1));
  if (weight == nullptr || weight->dims_size() != 4)
    refuse("the weight is not a stored 4-D tensor (only 2-D convolutions are imported)");
  Conv2dAttrs a;
  a.out_channels = weight->dims(0);
  a.kernel = window("kernel_shape", {weight->dims(2), weight->dims(3)});
  a.stride = window("strides", {1, 1});
  a.padding = symmetric_padding();
  a.dilation = window("dilations", {1, 1});
  a.groups = int_attribute(node_, "group", 1);
  a.bias = node_.input_size() >= 3 && !node_.input(2).empty();
  emit_unary(OpKind::conv2d, a);
}

void NodeMapper::map_gemm() {
  if (int_attribute(node_, "transA", 0) != 0) refuse("transA: a transposed input is not a linear layer");
  if (float_attribute(node_, "alpha", 1.0) != 1.0 || float_attribute(node_, "beta", 1.0) != 1.0) {
    refuse("alpha and beta must be 1 for a linear layer");
  }
  const onnx::TensorProto* weight = graph_.stored_tensor(node_.input(1));
  if (weight == nullptr || weight->dims_size() != 2) refuse("input B is not a stored weight matrix");
  const bool transposed = int_attribute(node_, "transB", 0) != 0;
  LinearAttrs a;
  a.out_features = weight->dims(transposed ? 0 : 1);
  a.in_features = weight->dims(transposed ? 1 : 0);
  a.bias = node_.input_size() >= 3 && !node_.input(2).empty();
  if (a.bias && !graph_.is_constant(node_.input(2))) refuse("input C (the bias) is not a constant");
  emit_unary(OpKind::linear, a);
}

void NodeMapper::map_matmul() {
  if (graph_.is_constant(node_.input(0))) refuse("the first input is a constant; only x W is imported");
  if (const std::optional<WeightSource> weight = graph_.weight_matrix(node_.input(1))) {
    LinearAttrs a;
    // x W: W is [in, out]; through a Transpose it is stored [out, in] (PyTorch's nn.Linear).
    a.out_features = weight->tensor->dims(weight->transposed ? 0 : 1);
    a.in_features = weight->tensor->dims(weight->transposed ? 1 : 0);
    const auto bias = patterns_.bias_of_matmul.find(index_);
    a.bias = bias != patterns_.bias_of_matmul.end();
    // A head reading an embedding's table (transposed) shares that weight; with constant
    // folding the head reads a transposed copy, recognised by its values.
    if (!a.bias && weight->transposed) a.tied_to = state_.embedding_with_table(weight->tensor->name());
    for (const auto& [table_name, embedding] : state_.embedding_tables()) {
      if (a.bias || !a.tied_to.empty()) break;
      if (same_values_as_table(*weight, *graph_.stored_tensor(table_name))) a.tied_to = embedding;
    }
    const std::string output = a.bias ? graph_.node(bias->second).output(0) : node_.output(0);
    state_.add_layer(node_, OpKind::linear, a, {input_layer(0)}, output);
    return;
  }
  if (graph_.is_constant(node_.input(1))) refuse("the second input is a constant that is not a 2-D weight matrix");
  emit(OpKind::matmul, MatMulAttrs{}, {input_layer(0), input_layer(1)});
}

void NodeMapper::map_add() {
  if (patterns_.matmul_of_bias.count(index_) != 0) return;  // made with its MatMul
  std::vector<std::string> inputs;
  for (int i = 0; i < 2; ++i) {
    inputs.push_back(graph_.is_constant(node_.input(i)) ? folded_positions(node_.input(i), node_.input(1 - i))
                                                        : input_layer(i));
  }
  emit(OpKind::add, NoAttrs{}, inputs);
}

std::string NodeMapper::folded_positions(const std::string& constant, const std::string& other) {
  // Constant folding turns the lookup of positions 0..T-1 into a stored [T, D] table added to
  // the token embedding: that is the learned-positions embedding, with T rows.
  const onnx::TensorProto* table = graph_.stored_tensor(constant);
  const bool after_tokens =
      state_.has_layer_for(other) && state_.kind_of(state_.layer_for(other, node_)) == OpKind::embedding;
  Shape rows;
  if (table != nullptr) {
    for (int64_t dim : table->dims()) {
      if (!(rows.empty() && dim == 1)) rows.push_back(dim);  // leading 1s broadcast over the batch
    }
  }
  if (!after_tokens || rows.size() != 2 || rows != graph_.per_sample_shape(other, node_)) {
    refuse(
        fmt::format("adds the constant '{}', which is neither a linear layer's bias nor learned positions", constant));
  }
  const std::string layer = state_.add_extra_layer(constant, OpKind::embedding, EmbeddingAttrs{rows[0], rows[1], true},
                                                   {state_.token_input_layer(node_)});
  state_.note_embedding_table(constant, layer);
  return layer;
}

void NodeMapper::map_pool(bool max) {
  Pool2dAttrs a;
  a.kernel = window("kernel_shape", {});
  a.stride = window("strides", {1, 1});
  a.padding = symmetric_padding();
  a.ceil_mode = int_attribute(node_, "ceil_mode", 0) != 0;
  if (window("dilations", {1, 1}) != Size2{1, 1}) refuse("dilations: dilated pooling is not imported");
  if (max) {
    emit_unary(OpKind::maxpool, a);
    return;
  }
  // PyTorch exports adaptive average pooling whose bins divide the input as an AveragePool with
  // kernel = stride; it is imported back as the adaptive pool, which it computes exactly.
  const Shape in = graph_.per_sample_shape(node_.input(0), node_);
  const bool tiles_input = a.kernel == a.stride && a.padding == Size2{0, 0} && !a.ceil_mode && in.size() == 3 &&
                           in[1] % a.kernel.h == 0 && in[2] % a.kernel.w == 0;
  if (tiles_input) {
    emit_unary(OpKind::adaptive_avgpool, AdaptiveAvgPoolAttrs{{in[1] / a.kernel.h, in[2] / a.kernel.w}});
  } else {
    emit_unary(OpKind::avgpool, a);
  }
}

void NodeMapper::map_flatten() {
  if (int_attribute(node_, "axis", 1) != 1)
    refuse("axis: only flattening all but the batch dimension (axis 1) is imported");
  emit_unary(OpKind::flatten, NoAttrs{});
}

void NodeMapper::map_reshape() {
  const Shape in = graph_.per_sample_shape(node_.input(0), node_);
  const Shape out = graph_.per_sample_shape(node_.output(0), node_);
  if (in == out) {
    state_.alias(node_.output(0), input_layer(0));
  } else if (out.size() == 1 && out[0] == num_elements(in)) {
    emit_unary(OpKind::flatten, NoAttrs{});
  } else {
    refuse(fmt::format("reshapes {} to {} per sample; outside attention only flattening is imported",
                       shape_to_string(in), shape_to_string(out)));
  }
}

void NodeMapper::map_gather() {
  const onnx::TensorProto* table = graph_.stored_tensor(node_.input(0));
  if (table == nullptr || table->dims_size() != 2 || int_attribute(node_, "axis", 0) != 0) {
    refuse("only row lookups in a stored 2-D table (embeddings) are imported");
  }
  EmbeddingAttrs a{table->dims(0), table->dims(1), false};
  std::string input;
  if (const onnx::TensorProto* indices = graph_.stored_tensor(node_.input(1))) {
    // Constant indices 0..T-1: learned positions, looked up for the token sequence.
    const std::vector<int64_t> positions =
        tensor_ints(*indices, fmt::format("{}: {}", graph_.source(), graph_.describe(node_)));
    for (size_t i = 0; i < positions.size(); ++i) {
      if (positions[i] != static_cast<int64_t>(i))
        refuse("constant indices that are not the positions 0, 1, ... are not imported");
    }
    a.positional = true;
    input = state_.token_input_layer(node_);
  } else {
    input = input_layer(1);
  }
  const std::string layer = state_.add_layer(node_, OpKind::embedding, a, {input}, node_.output(0));
  state_.note_embedding_table(node_.input(0), layer);
}

void NodeMapper::map_output_softmax() {
  if (!graph_.is_graph_output(node_.output(0))) {
    refuse("a Softmax is imported inside a recognised attention block, or at the output as the loss's softmax");
  }
  const Shape in = graph_.per_sample_shape(node_.input(0), node_);
  const int64_t axis = int_attribute(node_, "axis", -1);
  if (axis != -1 && axis != static_cast<int64_t>(in.size()))
    refuse("axis: only a softmax over the last dimension is imported");
  emit_unary(OpKind::softmax_cross_entropy, NoAttrs{});
}

void NodeMapper::map() {
  const auto region = patterns_.region_of_node.find(index_);
  if (region != patterns_.region_of_node.end()) {
    map_region(patterns_.regions[static_cast<size_t>(region->second)]);
    return;
  }
  // Constants and what is computed from them alone (shapes, masks) make no layer.
  const bool folded = std::all_of(node_.output().begin(), node_.output().end(),
                                  [&](const std::string& t) { return t.empty() || graph_.is_constant(t); });
  if (folded) return;
  const std::string& op = node_.op_type();
  if (op == "Conv")
    map_conv();
  else if (op == "Gemm")
    map_gemm();
  else if (op == "MatMul")
    map_matmul();
  else if (op == "Add")
    map_add();
  else if (op == "Relu")
    emit_unary(OpKind::relu, NoAttrs{});
  else if (op == "Dropout")
    emit_unary(OpKind::dropout, DropoutAttrs{dropout_ratio(graph_, node_)});
  else if (op == "BatchNormalization")
    emit_unary(OpKind::batchnorm, NormAttrs{float_attribute(node_, "epsilon", 1e-5)});
  else if (op == "LayerNormalization") {
    if (int_attribute(node_, "axis", -1) != -1) refuse("axis: only normalising the last dimension is imported");
    emit_unary(OpKind::layernorm, NormAttrs{float_attribute(node_, "epsilon", 1e-5)});
  } else if (op == "MaxPool" || op == "AveragePool")
    map_pool(op == "MaxPool");
  else if (op == "GlobalAveragePool")
    emit_unary(OpKind::adaptive_avgpool, AdaptiveAvgPoolAttrs{{1, 1}});
  else if (op == "Flatten")
    map_flatten();
  else if (op == "Reshape")
    map_reshape();
  else if (op == "Identity")
    state_.alias(node_.output(0), input_layer(0));
  else if (op == "Gather")
    map_gather();
  else if (op == "Concat") {
    const int64_t axis = int_attribute(node_, "axis", 0);
    if (axis < 1) refuse("axis: only joining along a per-sample dimension (axis >= 1) is imported");
    std::vector<std::string> inputs;
    for (int i = 0; i < node_.input_size(); ++i) inputs.push_back(input_layer(i));
    emit(OpKind::concat, ConcatAttrs{axis - 1}, std::move(inputs));
  } else if (op == "Softmax" || op == "LogSoftmax")
    map_output_softmax();
  else if (op == "SoftmaxCrossEntropyLoss")
    emit_unary(OpKind::softmax_cross_entropy, NoAttrs{});
  else
    refuse(fmt::format("ONNX op '{}' is not supported (model/README.md lists the ops the importer maps)", op));
}

}  // namespace

void map_node(const OnnxGraph& graph, const GraphPatterns& patterns, int node_index, ImportState& state) {
  NodeMapper(graph, patterns, node_index, state).map();
}

}  // namespace splitbrain::model::onnx_import
