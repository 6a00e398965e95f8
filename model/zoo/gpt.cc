// GPT-2-style decoder-only transformer (Radford et al. 2019): learned token and position
// embeddings, pre-norm blocks of attention and a 4x GELU MLP, a final layernorm and an output
// head tied to the token embedding (or, with untied=1, a head of its own). Also the shape of GPT-3
// (Brown et al. 2020) at any size.

#include <fmt/format.h>

#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {

Model build_gpt(const std::string& name, const ZooOptions& options) {
  const int64_t layers = options.at("layers");
  const int64_t hidden = options.at("hidden");
  const int64_t heads = options.at("heads");
  const int64_t sequence = options.at("seq");
  const int64_t vocabulary = options.at("vocab");
  const int64_t positions = options.at("positions");
  const double attention_dropout = static_cast<double>(options.at("attn_dropout")) / 100.0;
  constexpr double kDropout = 0.1;

  NetBuilder net(name);
  const auto tokens = net.input({sequence}, /*tokens=*/true);
  auto x = net.add(
      {net.embedding(tokens, vocabulary, hidden, false, "wte"), net.embedding(tokens, positions, hidden, true, "wpe")},
      "embed");
  x = net.dropout(x, kDropout, "embed.dropout");
  for (int64_t i = 0; i < layers; ++i) {
    const std::string h = fmt::format("h{}.", i);
    auto a = net.linear(net.layernorm(x, h + "ln_1"), 3 * hidden, true, h + "attn.c_attn");
    a = net.linear(net.self_attention(a, heads, h + "attn.core", attention_dropout), hidden, true, h + "attn.c_proj");
    x = net.add({x, net.dropout(a, kDropout, h + "attn.dropout")}, h + "attn.residual");
    auto m = net.linear(net.layernorm(x, h + "ln_2"), 4 * hidden, true, h + "mlp.c_fc");
    m = net.linear(net.gelu(m, h + "mlp.gelu"), hidden, true, h + "mlp.c_proj");
    x = net.add({x, net.dropout(m, kDropout, h + "mlp.dropout")}, h + "mlp.residual");
  }
  x = net.layernorm(x, "ln_f");
  net.loss(net.linear(x, vocabulary, /*bias=*/false, "lm_head", /*tied_to=*/options.at("untied") != 0 ? "" : "wte"));
  return net.build();
}

}  // namespace splitbrain::model::zoo
