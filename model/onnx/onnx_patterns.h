#pragma once
// Groups of ONNX nodes that stand for one layer of ours, found before the node-by-node mapping:
//  - a linear layer's bias: MatMul by a weight matrix, then Add of a 1-D constant (how PyTorch
//    exports nn.Linear on inputs of rank 3 and more);
//  - GELU written out in arithmetic: 0.5 x (1 + erf(x / sqrt 2)) or the tanh approximation
//    (opset 17 has no Gelu op): Erf or Tanh inside a block of Mul/Add/Div/Pow/Sub/Sqrt whose only
//    non-constant input is x;
//  - self-attention: a Softmax between two MatMuls with no weights, with the Reshape, Transpose,
//    Gather/Split, scaling and causal mask around it, reading one fused q|k|v tensor or three
//    projections (linear layers) of one tensor: of equal size, or, grouped-query attention, k and
//    v narrower than q (Hugging Face Llama's repeat_kv: Unsqueeze, Expand, Reshape); rotary
//    positions inside it as Hugging Face's rotate-half (Slice, Neg, Concat) times stored cos and
//    sin tables, its base read back from them;
//  - RMSNorm as Hugging Face Llama's LlamaRMSNorm exports at opset 17: Pow(x, 2), ReduceMean
//    over the last axis, Add(eps), Sqrt, Div(1, .) or Reciprocal, Mul(x, .), Mul(weight, .);
//  - SwiGLU: silu(gate) * up with silu as Sigmoid(gate) * gate (opset 17 has no SiLU op).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/onnx/onnx_graph.h"
#include "model/op.h"

namespace splitbrain::model::onnx_import {

struct NodeRegion {
  OpKind kind = OpKind::gelu;  // gelu, self_attention, rms_norm or swiglu
  std::string input;           // the one tensor the region reads (swiglu: the gate)
  std::string second_input;    // swiglu: the up projection
  std::string output;          // the one tensor it gives to the rest of the graph
  std::vector<int> nodes;      // the nodes it covers
  int named_after = -1;        // the node whose name the layer takes (Erf/Tanh, Softmax)
  SelfAttentionAttrs attention;
  RmsNormAttrs rms_norm;
  // Attention whose q, k and v are three projections of one tensor (`input`): imported as one
  // linear layer giving q|k|v (the same parameters and FLOPs), named after the first of them.
  std::optional<LinearAttrs> fused_projection;
  int projection_named_after = -1;
};

struct GraphPatterns {
  std::vector<NodeRegion> regions;
  std::unordered_map<int, int> region_of_node;  // node index -> index in regions
  std::unordered_map<int, int> bias_of_matmul;  // MatMul node -> the Add node adding its bias
  std::unordered_map<int, int> matmul_of_bias;  // the reverse
};

GraphPatterns find_patterns(const OnnxGraph& graph);

// A MatMul whose second input is a weight matrix: a linear layer.
bool is_linear_matmul(const OnnxGraph& graph, const onnx::NodeProto& node);

}  // namespace splitbrain::model::onnx_import
