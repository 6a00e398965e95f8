#include "model/onnx/onnx_patterns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_set>

#include "model/errors.h"

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
  // Neg and Concat: rotate-half; Expand: grouped-query attention's repeated key/value heads.
  return one_of(op, {"MatMul",  "Transpose", "Reshape",  "Gather", "Split",  "Squeeze", "Unsqueeze",
                     "Slice",   "Div",       "Mul",      "Where",  "Add",    "Sub",     "Softmax",
                     "Dropout", "Cast",      "Identity", "Neg",    "Concat", "Expand"});
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

// Three linear layers reading one tensor give q, k and v: of equal size, or (grouped-query) k and
// v of one size narrower than q. Their nodes join the region, which then reads that tensor as one
// fused q|k|v projection; `key_value_fraction` is k's width over q's.
bool absorb_projections(const OnnxGraph& graph, const GraphPatterns& patterns, const std::set<std::string>& projected,
                        std::set<int>& nodes, NodeRegion& region, double& key_value_fraction) {
  std::vector<LinearAttrs> projections;
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
    if (!projections.empty() && (a.bias != projections.front().bias || input != shared_input)) return false;
    if (projections.empty()) {
      shared_input = input;
      region.projection_named_after = matmul;
    }
    region.projection_named_after = std::min(region.projection_named_after, matmul);
    projections.push_back(a);
    nodes.insert(matmul);
    if (bias != patterns.matmul_of_bias.end()) nodes.insert(bias->first);
  }
  // q is the widest; k and v share the other width.
  std::sort(projections.begin(), projections.end(),
            [](const LinearAttrs& a, const LinearAttrs& b) { return a.out_features < b.out_features; });
  const int64_t key_value = projections[0].out_features;
  const int64_t query = projections[2].out_features;
  if (projections[1].out_features != key_value || query % key_value != 0) return false;
  LinearAttrs fused = projections[2];
  fused.out_features = query + 2 * key_value;
  key_value_fraction = static_cast<double>(key_value) / static_cast<double>(query);
  region.fused_projection = fused;
  region.input = shared_input;
  return true;
}

float stored_float(const onnx::TensorProto& tensor, int64_t index) {
  float value = 0.0f;
  std::memcpy(&value, tensor.raw_data().data() + index * static_cast<int64_t>(sizeof(float)), sizeof(float));
  return value;
}

// The rotary base of rotate-half positions whose cos and sin tables [.., T, head_dim] are stored
// tensors multiplied in the region: at position 1, column k < head_dim / 2 holds the angle
// base^(-2k / head_dim), read as atan2(sin, cos). The last such column (the lowest frequency)
// gives the base back with the float tables' own precision (column 1 would raise its error to
// the power head_dim / 2: 999,996 for 10^6 at head_dim 128). Throws naming the node when the
// tables are not stored floats.
double rotary_base(const OnnxGraph& graph, const std::set<int>& nodes, int64_t head_dim, const onnx::NodeProto& named) {
  const onnx::TensorProto* cos_table = nullptr;
  const onnx::TensorProto* sin_table = nullptr;
  for (int n : nodes) {
    const onnx::NodeProto& inner = graph.node(n);
    if (inner.op_type() != "Mul") continue;
    for (const std::string& input : inner.input()) {
      const onnx::TensorProto* table = graph.stored_tensor(input);
      if (table == nullptr || table->dims_size() < 2 || table->dims(table->dims_size() - 1) != head_dim) continue;
      if (table->data_type() != onnx::TensorProto::FLOAT || !table->has_raw_data() ||
          table->raw_data().size() < static_cast<size_t>(2 * head_dim) * sizeof(float)) {
        continue;
      }
      // Position 0: cos 1, sin 0.
      (stored_float(*table, 0) == 1.0f ? cos_table : sin_table) = table;
    }
  }
  if (cos_table == nullptr || sin_table == nullptr || head_dim < 4) {
    throw ModelError(
        fmt::format("{}: {}: rotary positions (Neg of a rotate-half) without stored float cos and sin "
                    "tables [positions, {}] to read the base from (export them as buffers)",
                    graph.source(), graph.describe(named), head_dim));
  }
  const int64_t column = head_dim / 2 - 1;
  const double angle =
      std::atan2(stored_float(*sin_table, head_dim + column), stored_float(*cos_table, head_dim + column));
  const double base = std::pow(angle, -static_cast<double>(head_dim) / static_cast<double>(2 * column));
  // The tables are float: a whole base comes back within about 10^-7 of itself.
  return std::abs(base - std::round(base)) < 1e-5 * base ? std::round(base) : base;
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
    double key_value_fraction = 1.0;
    if (boundaries.size() == 3 && !absorb_projections(graph, patterns, boundaries, nodes, region, key_value_fraction)) {
      continue;
    }
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
    if (key_value_fraction < 1.0) {
      region.attention.kv_heads =
          static_cast<int64_t>(std::llround(static_cast<double>(region.attention.heads) * key_value_fraction));
    }
    int softmaxes = 0;
    bool rotary = false;
    for (int n : nodes) {
      const onnx::NodeProto& inner = graph.node(n);
      softmaxes += inner.op_type() == "Softmax" ? 1 : 0;
      // A mask is a Where, or an added constant, on the scores.
      const bool adds_constant = one_of(inner.op_type(), {"Add", "Sub"}) &&
                                 std::any_of(inner.input().begin(), inner.input().end(),
                                             [&](const std::string& t) { return graph.is_constant(t); });
      if (inner.op_type() == "Where" || adds_constant) region.attention.causal = true;
      if (inner.op_type() == "Dropout") region.attention.dropout = dropout_ratio(graph, inner);
      rotary = rotary || inner.op_type() == "Neg";
    }
    if (softmaxes != 1) continue;
    if (rotary) {
      const std::optional<Shape> queries = graph.full_shape(graph.node(graph.consumers(node.output(0))[0]).output(0));
      if (!queries || queries->size() != 4) continue;
      region.attention.rope_theta = rotary_base(graph, nodes, (*queries)[3], node);  // [N, heads, T, head_dim]
    }
    add_region(patterns, std::move(region), nodes);
  }
}

// The one consumer of `tensor` when it is a node of type `op`; -1 otherwise.
int only_consumer(const OnnxGraph& graph, const std::string& tensor, std::string_view op) {
  const auto& readers = graph.consumers(tensor);
  return readers.size() == 1 && graph.node(readers[0]).op_type() == op ? readers[0] : -1;
}

// The input of a two-input node other than `tensor` ("" when it reads `tensor` twice or not).
std::string other_input(const onnx::NodeProto& node, const std::string& tensor) {
  if (node.input_size() != 2) return "";
  if (node.input(0) == tensor) return node.input(1) == tensor ? "" : node.input(1);
  return node.input(1) == tensor ? node.input(0) : "";
}

// Whether a stored tensor holds one float equal to `value` (within float precision).
bool stored_scalar(const OnnxGraph& graph, const std::string& tensor, double value) {
  const onnx::TensorProto* stored = graph.stored_tensor(tensor);
  if (stored == nullptr || stored->data_type() != onnx::TensorProto::FLOAT) return false;
  float read = 0.0f;
  if (stored->has_raw_data() && stored->raw_data().size() == sizeof(float))
    std::memcpy(&read, stored->raw_data().data(), sizeof(float));
  else if (stored->float_data_size() == 1)
    read = stored->float_data(0);
  else
    return false;
  return std::abs(static_cast<double>(read) - value) <= 1e-6 * std::max(1.0, std::abs(value));
}

double stored_float_scalar(const OnnxGraph& graph, const std::string& tensor) {
  const onnx::TensorProto* stored = graph.stored_tensor(tensor);
  float read = 0.0f;
  if (stored != nullptr && stored->has_raw_data() && stored->raw_data().size() == sizeof(float))
    std::memcpy(&read, stored->raw_data().data(), sizeof(float));
  else if (stored != nullptr && stored->float_data_size() == 1)
    read = stored->float_data(0);
  return read;
}

// x * 1 / sqrt(mean(x^2) + eps) * weight, seeded at the ReduceMean of Pow(x, 2). The epsilon is
// read as the float the graph stores (1e-5 comes back as 9.99999974e-06): rounded to 7 digits.
void find_rms_norms(const OnnxGraph& graph, GraphPatterns& patterns) {
  for (int mean = 0; mean < graph.node_count(); ++mean) {
    const onnx::NodeProto& reduce = graph.node(mean);
    if (reduce.op_type() != "ReduceMean" || patterns.region_of_node.count(mean) != 0) continue;
    const int pow = graph.producer(reduce.input(0));
    if (pow < 0 || graph.node(pow).op_type() != "Pow" || !stored_scalar(graph, graph.node(pow).input(1), 2.0) ||
        graph.consumers(reduce.input(0)).size() != 1) {
      continue;
    }
    const std::string x = graph.node(pow).input(0);
    // The mean over the last axis, kept as a dimension of 1.
    const std::optional<Shape> x_shape = graph.full_shape(x);
    const std::vector<int64_t> axes = ints_attribute(reduce, "axes", {});
    const auto rank = x_shape ? static_cast<int64_t>(x_shape->size()) : 0;
    if (rank == 0 || axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1) ||
        int_attribute(reduce, "keepdims", 1) != 1) {
      continue;
    }
    const int add = only_consumer(graph, reduce.output(0), "Add");
    if (add < 0) continue;
    const std::string epsilon = other_input(graph.node(add), reduce.output(0));
    if (epsilon.empty() || !graph.is_constant(epsilon)) continue;
    const int sqrt = only_consumer(graph, graph.node(add).output(0), "Sqrt");
    if (sqrt < 0) continue;
    // 1 / sqrt: Div(1, .) or Reciprocal; then Mul(x, .).
    std::string inverse;
    std::set<int> nodes{pow, mean, add, sqrt};
    const auto& sqrt_readers = graph.consumers(graph.node(sqrt).output(0));
    if (sqrt_readers.size() != 1) continue;
    const onnx::NodeProto& invert = graph.node(sqrt_readers[0]);
    if (invert.op_type() == "Reciprocal" ||
        (invert.op_type() == "Div" && invert.input(1) == graph.node(sqrt).output(0) &&
         stored_scalar(graph, invert.input(0), 1.0))) {
      inverse = invert.output(0);
      nodes.insert(sqrt_readers[0]);
    } else {
      continue;
    }
    const int scale = only_consumer(graph, inverse, "Mul");
    if (scale < 0 || other_input(graph.node(scale), inverse) != x) continue;
    const int weigh = only_consumer(graph, graph.node(scale).output(0), "Mul");
    if (weigh < 0) continue;
    const onnx::TensorProto* weight = graph.stored_tensor(other_input(graph.node(weigh), graph.node(scale).output(0)));
    const std::optional<Shape> shape = graph.full_shape(x);
    if (weight == nullptr || weight->dims_size() != 1 || !shape || shape->empty() || weight->dims(0) != shape->back())
      continue;
    nodes.insert(scale);
    nodes.insert(weigh);
    NodeRegion region;
    region.kind = OpKind::rms_norm;
    region.input = x;
    region.output = graph.node(weigh).output(0);
    region.named_after = weigh;
    region.rms_norm.epsilon = std::stod(fmt::format("{:.7g}", stored_float_scalar(graph, epsilon)));
    add_region(patterns, std::move(region), nodes);
  }
}

// silu(gate) * up: Sigmoid(gate), Mul(gate, .), Mul(., up).
void find_swiglus(const OnnxGraph& graph, GraphPatterns& patterns) {
  for (int sigmoid = 0; sigmoid < graph.node_count(); ++sigmoid) {
    const onnx::NodeProto& node = graph.node(sigmoid);
    if (node.op_type() != "Sigmoid" || patterns.region_of_node.count(sigmoid) != 0) continue;
    const std::string gate = node.input(0);
    const int silu = only_consumer(graph, node.output(0), "Mul");
    if (silu < 0 || other_input(graph.node(silu), node.output(0)) != gate) continue;
    const int product = only_consumer(graph, graph.node(silu).output(0), "Mul");
    if (product < 0) continue;
    const std::string up = other_input(graph.node(product), graph.node(silu).output(0));
    if (up.empty() || graph.is_constant(up) || graph.full_shape(up) != graph.full_shape(gate)) continue;
    NodeRegion region;
    region.kind = OpKind::swiglu;
    region.input = gate;
    region.second_input = up;
    region.output = graph.node(product).output(0);
    region.named_after = product;
    add_region(patterns, std::move(region), {sigmoid, silu, product});
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
  // Before attention, whose tracing stops at the regions already found.
  find_rms_norms(graph, patterns);
  find_swiglus(graph, patterns);
  find_attention(graph, patterns);
  return patterns;
}

}  // namespace splitbrain::model::onnx_import
