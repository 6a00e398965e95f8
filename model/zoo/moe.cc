// Mixture-of-experts decoders in Mixtral's layout (Mistral AI's reference names): Llama's blocks
// (zoo/llama.cc: grouped-query attention with rotary positions, RMSNorm, bias-free projections,
// untied head) whose MLP half is one sparse `moe` layer of `experts` SwiGLU experts, top_k of
// them per token.

#include <fmt/format.h>

#include "model/errors.h"
#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {
namespace {

constexpr double kPercent = 100.0;

// The MLP half: x + moe(rms_norm(x)), layers `prefix` + "ffn_norm", "feed_forward.moe",
// "feed_forward.residual".
NetBuilder::Tensor moe_feed_forward(NetBuilder& net, const NetBuilder::Tensor& x, const LlamaShape& shape,
                                    const MoeAttrs& experts, const std::string& prefix) {
  const auto normed = net.rms_norm(x, shape.rms_eps, prefix + "ffn_norm");
  const auto mixed = net.moe(normed, experts.experts, experts.top_k, experts.ffn, experts.capacity_factor,
                             prefix + "feed_forward.moe");
  return net.add({x, mixed}, prefix + "feed_forward.residual");
}

}  // namespace

Model build_moe(const std::string& name, const ZooOptions& options) {
  const LlamaShape shape = llama_shape(name, options);
  MoeAttrs experts;
  experts.experts = options.at("experts");
  experts.top_k = options.at("top_k");
  experts.ffn = shape.ffn;
  experts.capacity_factor = static_cast<double>(options.at("capacity")) / kPercent;
  // Named after the option here rather than after the first block's layer.
  if (experts.top_k > experts.experts) {
    throw ModelError(fmt::format("zoo model '{}': option 'top_k' ({}) must not exceed 'experts' ({})", name,
                                 experts.top_k, experts.experts));
  }
  return build_llama_decoder(name, options, shape,
                             [&](NetBuilder& net, const NetBuilder::Tensor& x, const std::string& prefix) {
                               return moe_feed_forward(net, x, shape, experts, prefix);
                             });
}

}  // namespace splitbrain::model::zoo
