// Llama-family decoder-only transformers (Meta's Llama 2 and 3 layout, Hugging Face's module
// names): a token embedding and nothing for positions (rotary embeddings inside attention),
// pre-norm blocks of grouped-query attention and a SwiGLU MLP with bias-free projections,
// RMSNorm everywhere, a final norm and an output head of its own. No dropout.

#include <fmt/format.h>

#include "model/errors.h"
#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {

// A remainder of hidden / heads would shrink the attention's output: refused, not rounded.
LlamaShape llama_shape(const std::string& name, const ZooOptions& options) {
  LlamaShape shape;
  shape.hidden = options.at("hidden");
  shape.heads = options.at("heads");
  shape.kv_heads = options.at("kv_heads");
  shape.fused_attention = options.at("fused") != 0;
  shape.ffn = options.at("ffn");
  shape.rope_theta = static_cast<double>(options.at("rope_theta"));
  if (shape.hidden % shape.heads != 0) {
    throw ModelError(
        fmt::format("zoo model '{}': option 'heads' ({}) must divide 'hidden' ({})", name, shape.heads, shape.hidden));
  }
  if (shape.heads % shape.kv_heads != 0) {
    throw ModelError(fmt::format("zoo model '{}': option 'kv_heads' ({}) must divide 'heads' ({})", name,
                                 shape.kv_heads, shape.heads));
  }
  return shape;
}

NetBuilder::Tensor llama_attention(NetBuilder& net, const NetBuilder::Tensor& x, const LlamaShape& shape,
                                   const std::string& prefix) {
  // One fused projection gives every query head, then each key/value group's k and v.
  const int64_t fused = (shape.heads + 2 * shape.kv_heads) * shape.head_dim();
  auto a = net.linear(net.rms_norm(x, shape.rms_eps, prefix + "attention_norm"), fused, /*bias=*/false,
                      prefix + "attention.wqkv");
  a = net.self_attention(a, shape.heads, prefix + "attention.core", /*dropout=*/0.0, shape.kv_heads, shape.rope_theta,
                         shape.fused_attention);
  a = net.linear(a, shape.hidden, /*bias=*/false, prefix + "attention.wo");
  return net.add({x, a}, prefix + "attention.residual");
}

NetBuilder::Tensor llama_feed_forward(NetBuilder& net, const NetBuilder::Tensor& x, const LlamaShape& shape,
                                      const std::string& prefix) {
  const auto normed = net.rms_norm(x, shape.rms_eps, prefix + "ffn_norm");
  const auto gate = net.linear(normed, shape.ffn, /*bias=*/false, prefix + "feed_forward.w1");
  const auto up = net.linear(normed, shape.ffn, /*bias=*/false, prefix + "feed_forward.w3");
  const auto down = net.linear(net.swiglu(gate, up, prefix + "feed_forward.swiglu"), shape.hidden, /*bias=*/false,
                               prefix + "feed_forward.w2");
  return net.add({x, down}, prefix + "feed_forward.residual");
}

Model build_llama_decoder(const std::string& name, const ZooOptions& options, const LlamaShape& shape,
                          const LlamaMlpHalf& mlp_half) {
  const int64_t layers = options.at("layers");
  const int64_t vocabulary = options.at("vocab");

  NetBuilder net(name);
  const auto tokens = net.input({options.at("seq")}, /*tokens=*/true);
  auto x = net.embedding(tokens, vocabulary, shape.hidden, /*positional=*/false, "tok_embeddings");
  for (int64_t i = 0; i < layers; ++i) {
    const std::string h = fmt::format("h{}.", i);
    x = mlp_half(net, llama_attention(net, x, shape, h), h);
  }
  x = net.rms_norm(x, shape.rms_eps, "norm");
  net.loss(net.linear(x, vocabulary, /*bias=*/false, "output"));
  return net.build();
}

Model build_llama(const std::string& name, const ZooOptions& options) {
  const LlamaShape shape = llama_shape(name, options);
  return build_llama_decoder(name, options, shape,
                             [&](NetBuilder& net, const NetBuilder::Tensor& x, const std::string& prefix) {
                               return llama_feed_forward(net, x, shape, prefix);
                             });
}

}  // namespace splitbrain::model::zoo
