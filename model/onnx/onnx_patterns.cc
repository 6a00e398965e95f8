#include "model/onnx/onnx_patterns.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "model/onnx/onnx_attributes.h"

namespace splitbrain::model::onnx_import {
namespace {

bool one_of(const std::string& op, std::initializer_list<std::string_view> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Ops GELU is written out in.
bool is_gelu_arithmetic(const std::string& op) {
  return one_of(op, {"Mul", "Add", "Div", "Pow", "Sub", "Sqrt", "Tanh", "Erf"});
}

// Ops found inside an exported attention block.
bool is_attention_internal(const std::string& op) {
  return one_of(op, {"MatMul", "Transpose", "Reshape", "Gather", "Split", "Squeeze", "Unsqueeze", "Slice", "Div", "Mul",
                     "Where", "Add", "Sub", "Softmax", "Dropout", "Cast", "Identity"});
}

void find_bias_adds(const OnnxGraph& graph, GraphPatterns& patterns) {
  for (int i = 0; i < graph.node_count(); ++i) {
    const onnx::NodeProto& add = graph.node(i);
    if (add.op_type() != "Add" || add.input_size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const onnx::TensorProto* bias = graph.stored_tensor(add.input(side));
      const int matmul = graph.producer(add.input(1 - side));
      if (bias == nullptr || matmul < 0 || !is_linear_matmul(graph, graph.node(matmul))) continue;
      if (graph.consumers(add.input(1 - side)).size() != 1) continue;
      const WeightSource weight = *graph.weight_matrix(graph.node(matmul).input(1));
      const int64_t out_features = weight.tensor->dims(weight.transposed ? 0 : 1);
      int64_t elements = 1;
      for (int64_t dim : bias->dims()) elements *= dim;
      const bool last_dim_only = bias->dims_size() >= 1 && bias->dims(bias->dims_size() - 1) == out_features;
      if (elements == out_features && last_dim_only) {
        patterns.bias_of_matmul[matmul] = i;
        patterns.matmul_of_bias[i] = matmul;
      }
    }
  }
}

// A tensor some layer of ours gives: a data input, or the output of a node outside the pattern
// being traced, of a linear layer or of its bias.
bool is_boundary(const OnnxGraph& graph, const GraphPatterns& patterns, const std::string& tensor,
                 bool (*inside)(const std::string&)) {
  const int p = graph.producer(tensor);
  if (p < 0) return true;
  const onnx::NodeProto& producer = graph.node(p);
  return !inside(producer.op_type()) || is_linear_matmul(graph, producer) || patterns.matmul_of_bias.count(p) != 0 ||
         patterns.region_of_node.count(p) != 0;
}

// Walks back from `start` through non-constant inputs until boundary tensors; returns the nodes
// passed and fills `boundaries`.
std::set<int> trace_back(const OnnxGraph& graph, const GraphPatterns& patterns, const std::string& start,
                         bool (*inside)(const std::string&), std::set<std::string>& boundaries) {
  std::set<int> visited;
  std::vector<std::string> pending{start};
  while (!pending.empty()) {
    const std::string tensor = pending.back();
    pending.pop_back();
    if (graph.is_constant(tensor)) continue;
    if (is_boundary(graph, patterns, tensor, inside)) {
      boundaries.insert(tensor);
      continue;
    }
    const int p = graph.producer(tensor);
    if (!visited.insert(p).second) continue;
    for (const std::string& input : graph.node(p).input()) {
      if (!input.empty()) pending.push_back(input);
    }
  }
  return visited;
}

// The tensors of `nodes` read outside them (or graph outputs).
std::vector<std::string> region_outputs(const OnnxGraph& graph, const std::set<int>& nodes) {
  std::vector<std::string> outputs;
  for (int n : nodes) {
    for (const std::string& output : graph.node(n).output()) {
      if (output.empty()) continue;
      const auto& readers = graph.consumers(output);
      const bool read_outside = std::any_of(readers.begin(), readers.end(), [&](int r) { return nodes.count(r) == 0; });
      if (read_outside || graph.is_graph_output(output)) outputs.push_back(output);
    }
  }
  return outputs;
}

void add_region(GraphPatterns& patterns, NodeRegion region, const std::set<int>& nodes) {
  region.nodes.assign(nodes.begin(), nodes.end());
  const int index = static_cast<int>(patterns.regions.size());
  for (int n : nodes) patterns.region_of_node[n] = index;
  patterns.regions.push_back(std::move(region));
}

void find_gelus(const OnnxGraph& graph, GraphPatterns& patterns) {
  constexpr size_t kSmallestGelu = 4;  // erf form: Div, Erf, Add, Mul (and the 0.5)
  for (int seed = 0; seed < graph.node_count(); ++seed) {
    const onnx::NodeProto& node = graph.node(seed);
    if ((node.op_type() != "Erf" && node.op_type() != "Tanh") || patterns.region_of_node.count(seed) != 0) continue;
    std::set<std::string> boundaries;
    trace_back(graph, patterns, node.input(0), is_gelu_arithmetic, boundaries);
    if (boundaries.size() != 1) continue;
    const std::string x = *boundaries.begin();
    // Everything computed from x alone by arithmetic, in graph order.
    std::set<int> nodes;
    std::unordered_set<std::string> computed{x};
    for (int n = std::max(graph.producer(x), 0); n < graph.node_count(); ++n) {
      const onnx::NodeProto& candidate = graph.node(n);
      if (!is_gelu_arithmetic(candidate.op_type()) || patterns.matmul_of_bias.count(n) != 0 ||
          patterns.region_of_node.count(n) != 0) {
        continue;
      }
      bool reads_x_only = true;
      bool reads_something = false;
      for (const std::string& input : candidate.input()) {
        if (input.empty() || graph.is_constant(input)) continue;
        reads_something = true;
        reads_x_only = reads_x_only && computed.count(input) != 0;
      }
      if (!reads_something || !reads_x_only) continue;
      nodes.insert(n);
      for (const std::string& output : candidate.output()) computed.insert(output);
    }
    const std::vector<std::string> outputs = region_outputs(graph, nodes);
    if (nodes.size() < kSmallestGelu || nodes.count(seed) == 0 || outputs.size() != 1) continue;
    NodeRegion region;
    region.kind = OpKind::gelu;
    region.input = x;
    region.output = outputs.front();
    region.named_after = seed;
    add_region(patterns, std::move(region), nodes);
  }
}

// Three linear layers of equal size reading one tensor give q, k and v: their nodes join the
// region, which then reads that tensor.
bool absorb_projections(const OnnxGraph& graph, const GraphPatterns& patterns, const std::set<std::string>& projected,
                        std::set<int>& nodes, NodeRegion& region) {
  std::optional<LinearAttrs> fused;
  std::string shared_input;
  for (const std::string& tensor : projected) {
    int matmul = graph.producer(tensor);
    const auto bias = patterns.matmul_of_bias.find(matmul);
    if (bias != patterns.matmul_of_bias.end()) matmul = bias->second;
    if (matmul < 0 || !is_linear_matmul(graph, graph.node(matmul))) return false;
    const WeightSource weight = *graph.weight_matrix(graph.node(matmul).input(1));
    LinearAttrs a;
    a.out_features = weight.tensor->dims(weight.transposed ? 0 : 1);
    a.in_features = weight.tensor->dims(weight.transposed ? 1 : 0);
    a.bias = bias != patterns.matmul_of_bias.end();
    const std::string& input = graph.node(matmul).input(0);
    if (fused && (a.out_features != fused->out_features || a.bias != fused->bias || input != shared_input))
      return false;
    if (!fused) {
      fused = a;
      shared_input = input;
      region.projection_named_after = matmul;
    }
    region.projection_named_after = std::min(region.projection_named_after, matmul);
    nodes.insert(matmul);
    if (bias != patterns.matmul_of_bias.end()) nodes.insert(bias->first);
  }
  fused->out_features *= 3;
  region.fused_projection = fused;
  region.input = shared_input;
  return true;
}

void find_attention(const OnnxGraph& graph, GraphPatterns& patterns) {
  for (int softmax = 0; softmax < graph.node_count(); ++softmax) {
    const onnx::NodeProto& node = graph.node(softmax);
    if (node.op_type() != "Softmax" || patterns.region_of_node.count(softmax) != 0) continue;
    // P V, then the Transpose/Reshape back to [T, D].
    const auto& readers = graph.consumers(node.output(0));
    if (readers.size() != 1 || graph.node(readers[0]).op_type() != "MatMul") continue;
    std::string output = graph.node(readers[0]).output(0);
    while (graph.consumers(output).size() == 1 &&
           one_of(graph.node(graph.consumers(output)[0]).op_type(), {"Transpose", "Reshape"})) {
      output = graph.node(graph.consumers(output)[0]).output(0);
    }
    std::set<std::string> boundaries;
    std::set<int> nodes = trace_back(graph, patterns, output, is_attention_internal, boundaries);
    if (boundaries.empty()) continue;
    NodeRegion region;
    region.kind = OpKind::self_attention;
    region.input = *boundaries.begin();
    if (boundaries.size() == 3 && !absorb_projections(graph, patterns, boundaries, nodes, region)) continue;
    const std::vector<std::string> outputs = region_outputs(graph, nodes);
    const std::optional<Shape> scores = graph.full_shape(node.input(0));
    if ((boundaries.size() != 1 && boundaries.size() != 3) || outputs.size() != 1 || nodes.count(softmax) == 0 ||
        !scores || scores->size() != 4) {
      continue;
    }
    region.output = output;
    region.named_after = softmax;
    region.attention.heads = (*scores)[1];  // [N, heads, T, T]
    region.attention.causal = false;
    int softmaxes = 0;
    for (int n : nodes) {
      const onnx::NodeProto& inner = graph.node(n);
      softmaxes += inner.op_type() == "Softmax" ? 1 : 0;
      // A mask is a Where, or an added constant, on the scores.
      const bool adds_constant = one_of(inner.op_type(), {"Add", "Sub"}) &&
                                 std::any_of(inner.input().begin(), inner.input().end(),
                                             [&](const std::string& t) { return graph.is_constant(t); });
      if (inner.op_type() == "Where" || adds_constant) region.attention.causal = true;
      if (inner.op_type() == "Dropout") region.attention.dropout = dropout_ratio(graph, inner);
    }
    if (softmaxes != 1) continue;
    add_region(patterns, std::move(region), nodes);
  }
}

}  // namespace

bool is_linear_matmul(const OnnxGraph& graph, const onnx::NodeProto& node) {
  return node.op_type() == "MatMul" && node.input_size() == 2 && !graph.is_constant(node.input(0)) &&
         graph.weight_matrix(node.input(1)).has_value();
}

GraphPatterns find_patterns(const OnnxGraph& graph) {
  GraphPatterns patterns;
  find_bias_adds(graph, patterns);
  find_gelus(graph, patterns);
  find_attention(graph, patterns);
  return patterns;
}

}  // namespace splitbrain::model::onnx_import
