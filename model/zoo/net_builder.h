#pragma once
// A thin layer over GraphBuilder for the zoo: one call per layer, returning the new layer's name
// so networks read top to bottom like their PyTorch definitions.

#include <string>
#include <vector>

#include "model/graph_builder.h"

namespace splitbrain::model::zoo {

class NetBuilder {
 public:
  explicit NetBuilder(const std::string& model_name);

  using Tensor = std::string;  // a layer's name stands for its output

  Tensor input(Shape per_sample, bool tokens = false);
  Tensor conv2d(const Tensor& x, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding, bool bias,
                const std::string& name = "");
  Tensor linear(const Tensor& x, int64_t out_features, bool bias = true, const std::string& name = "",
                const std::string& tied_to = "");
  Tensor maxpool(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding = 0, const std::string& name = "");
  Tensor adaptive_avgpool(const Tensor& x, int64_t output_size, const std::string& name = "");
  Tensor relu(const Tensor& x, const std::string& name = "");
  Tensor gelu(const Tensor& x, const std::string& name = "");
  Tensor dropout(const Tensor& x, double probability, const std::string& name = "");
  Tensor flatten(const Tensor& x, const std::string& name = "");
  Tensor batchnorm(const Tensor& x, const std::string& name = "");
  Tensor layernorm(const Tensor& x, const std::string& name = "");
  Tensor rms_norm(const Tensor& x, double eps = 1e-5, const std::string& name = "");
  // silu(gate) * up, elementwise: Llama's gated feed-forward unit.
  Tensor swiglu(const Tensor& gate, const Tensor& up, const std::string& name = "");
  // A sparse mixture-of-experts MLP on [T, D] (model/op.h: MoeAttrs); capacity_factor 0 = no limit.
  Tensor moe(const Tensor& x, int64_t experts, int64_t top_k, int64_t ffn, double capacity_factor,
             const std::string& name = "");
  Tensor add(const std::vector<Tensor>& xs, const std::string& name = "");
  Tensor embedding(const Tensor& tokens, int64_t count, int64_t dim, bool positional, const std::string& name = "");
  // kv_heads 0 = heads (multi-head); rope_theta 0 = no rotary positions; fused keeps only the
  // softmax statistics for backward (model/op.h).
  Tensor self_attention(const Tensor& qkv, int64_t heads, const std::string& name = "", double dropout = 0.0,
                        int64_t kv_heads = 0, double rope_theta = 0.0, bool fused = false);
  Tensor loss(const Tensor& logits, const std::string& name = "loss");

  Model build() const { return graph_.build(); }

 private:
  Tensor add_layer(const std::string& name, std::string_view default_prefix, OpKind kind, OpAttrs attrs,
                   std::vector<Tensor> inputs);
  GraphBuilder graph_;
};

}  // namespace splitbrain::model::zoo
