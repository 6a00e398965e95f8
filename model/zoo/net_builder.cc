#include "model/zoo/net_builder.h"

#include <fmt/format.h>

namespace splitbrain::model::zoo {

NetBuilder::NetBuilder(const std::string& model_name) : graph_(model_name, fmt::format("zoo model '{}'", model_name)) {}

NetBuilder::Tensor NetBuilder::add_layer(const std::string& name, std::string_view default_prefix, OpKind kind,
                                         OpAttrs attrs, std::vector<Tensor> inputs) {
  return graph_.add(name.empty() ? graph_.fresh_name(default_prefix) : name, kind, std::move(attrs), std::move(inputs));
}

NetBuilder::Tensor NetBuilder::input(Shape per_sample, bool tokens) {
  return add_layer("data", "data", OpKind::input, InputAttrs{std::move(per_sample), tokens}, {});
}

NetBuilder::Tensor NetBuilder::conv2d(const Tensor& x, int64_t out_channels, int64_t kernel, int64_t stride,
                                      int64_t padding, bool bias, const std::string& name) {
  Conv2dAttrs a;
  a.out_channels = out_channels;
  a.kernel = {kernel, kernel};
  a.stride = {stride, stride};
  a.padding = {padding, padding};
  a.bias = bias;
  return add_layer(name, "conv", OpKind::conv2d, a, {x});
}

NetBuilder::Tensor NetBuilder::linear(const Tensor& x, int64_t out_features, bool bias, const std::string& name,
                                      const std::string& tied_to) {
  LinearAttrs a;
  a.out_features = out_features;
  a.bias = bias;
  a.tied_to = tied_to;
  return add_layer(name, "fc", OpKind::linear, a, {x});
}

NetBuilder::Tensor NetBuilder::maxpool(const Tensor& x, int64_t kernel, int64_t stride, int64_t padding,
                                       const std::string& name) {
  Pool2dAttrs a;
  a.kernel = {kernel, kernel};
  a.stride = {stride, stride};
  a.padding = {padding, padding};
  return add_layer(name, "pool", OpKind::maxpool, a, {x});
}

NetBuilder::Tensor NetBuilder::adaptive_avgpool(const Tensor& x, int64_t output_size, const std::string& name) {
  return add_layer(name, "avgpool", OpKind::adaptive_avgpool, AdaptiveAvgPoolAttrs{{output_size, output_size}}, {x});
}

NetBuilder::Tensor NetBuilder::relu(const Tensor& x, const std::string& name) {
  return add_layer(name, "relu", OpKind::relu, NoAttrs{}, {x});
}

NetBuilder::Tensor NetBuilder::gelu(const Tensor& x, const std::string& name) {
  return add_layer(name, "gelu", OpKind::gelu, NoAttrs{}, {x});
}

NetBuilder::Tensor NetBuilder::dropout(const Tensor& x, double probability, const std::string& name) {
  return add_layer(name, "dropout", OpKind::dropout, DropoutAttrs{probability}, {x});
}

NetBuilder::Tensor NetBuilder::flatten(const Tensor& x, const std::string& name) {
  return add_layer(name, "flatten", OpKind::flatten, NoAttrs{}, {x});
}

NetBuilder::Tensor NetBuilder::batchnorm(const Tensor& x, const std::string& name) {
  return add_layer(name, "bn", OpKind::batchnorm, NormAttrs{}, {x});
}

NetBuilder::Tensor NetBuilder::layernorm(const Tensor& x, const std::string& name) {
  return add_layer(name, "ln", OpKind::layernorm, NormAttrs{}, {x});
}

NetBuilder::Tensor NetBuilder::rms_norm(const Tensor& x, double eps, const std::string& name) {
  return add_layer(name, "rms_norm", OpKind::rms_norm, RmsNormAttrs{eps}, {x});
}

NetBuilder::Tensor NetBuilder::swiglu(const Tensor& gate, const Tensor& up, const std::string& name) {
  return add_layer(name, "swiglu", OpKind::swiglu, NoAttrs{}, {gate, up});
}

NetBuilder::Tensor NetBuilder::moe(const Tensor& x, int64_t experts, int64_t top_k, int64_t ffn, double capacity_factor,
                                   const std::string& name) {
  return add_layer(name, "moe", OpKind::moe, MoeAttrs{experts, top_k, ffn, capacity_factor}, {x});
}

NetBuilder::Tensor NetBuilder::add(const std::vector<Tensor>& xs, const std::string& name) {
  return add_layer(name, "add", OpKind::add, NoAttrs{}, xs);
}

NetBuilder::Tensor NetBuilder::embedding(const Tensor& tokens, int64_t count, int64_t dim, bool positional,
                                         const std::string& name) {
  return add_layer(name, "embedding", OpKind::embedding, EmbeddingAttrs{count, dim, positional}, {tokens});
}

NetBuilder::Tensor NetBuilder::self_attention(const Tensor& qkv, int64_t heads, const std::string& name, double dropout,
                                              int64_t kv_heads, double rope_theta, bool fused) {
  return add_layer(name, "attention", OpKind::self_attention,
                   SelfAttentionAttrs{heads, true, dropout, kv_heads, rope_theta, fused}, {qkv});
}

NetBuilder::Tensor NetBuilder::loss(const Tensor& logits, const std::string& name) {
  return add_layer(name, "loss", OpKind::softmax_cross_entropy, NoAttrs{}, {logits});
}

}  // namespace splitbrain::model::zoo
