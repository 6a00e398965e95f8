#pragma once
// The zoo's network builders, one family per file. Registered by name in model/zoo.cc.

#include <functional>
#include <string>

#include "model/model.h"
#include "model/zoo.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {

// torchvision's VGG configurations: depth 11, 13, 16 or 19; 224x224 inputs.
Model build_vgg_imagenet(const std::string& name, int depth, int64_t classes);
// The VGG conv stack on 32x32x3 inputs with the classifier 512-4096-4096-classes.
Model build_vgg_cifar(const std::string& name, int depth, int64_t classes);
Model build_alexnet(const std::string& name, int64_t classes);
// torchvision's ResNet v1.5: depth 18 (basic blocks) or 50 (bottlenecks).
Model build_resnet(const std::string& name, int depth, int64_t classes);
Model build_mlp(const std::string& name, const ZooOptions& options);
Model build_fashion_vgg(const std::string& name);
Model build_gpt(const std::string& name, const ZooOptions& options);

// The widths of a Llama block (Meta's Llama 2 and 3 layout).
struct LlamaShape {
  int64_t hidden = 0;
  int64_t heads = 0;     // query heads; head_dim = hidden / heads
  int64_t kv_heads = 0;  // key/value heads shared by groups of heads / kv_heads query heads
  int64_t ffn = 0;       // the SwiGLU MLP's inner width
  double rope_theta = 0.0;
  double rms_eps = 1e-5;
  bool fused_attention = true;  // attention keeps only its softmax statistics (model/op.h)
  int64_t head_dim() const { return hidden / heads; }
};

// The attention half of a Llama block on x [T, hidden]: x + wo(attention(wqkv(rms_norm(x)))),
// layers named `prefix` + "attention_norm", "attention.wqkv", "attention.core", "attention.wo",
// "attention.residual". A mixture-of-experts block follows it with an MLP half of its own.
NetBuilder::Tensor llama_attention(NetBuilder& net, const NetBuilder::Tensor& x, const LlamaShape& shape,
                                   const std::string& prefix);
// The dense MLP half: x + w2(swiglu(w1(rms_norm(x)), w3(rms_norm(x)))), layers named `prefix` +
// "ffn_norm", "feed_forward.w1", "feed_forward.w3", "feed_forward.swiglu", "feed_forward.w2",
// "feed_forward.residual".
NetBuilder::Tensor llama_feed_forward(NetBuilder& net, const NetBuilder::Tensor& x, const LlamaShape& shape,
                                      const std::string& prefix);
// Llama (Touvron et al. 2023; Llama 3, Dubey et al. 2024): token embedding only (positions come
// from rotary embeddings in attention), pre-norm blocks of grouped-query attention and a SwiGLU
// MLP, every projection without bias, a final RMSNorm and an untied output head. No dropout.
Model build_llama(const std::string& name, const ZooOptions& options);

// A Llama entry's options (hidden, heads, kv_heads, ffn, rope_theta) as a block's widths, refusing
// those that would build another model silently, with the zoo entry and the option named.
LlamaShape llama_shape(const std::string& name, const ZooOptions& options);
// The MLP half of block `prefix` ("h{i}."), on the attention half's output x.
using LlamaMlpHalf =
    std::function<NetBuilder::Tensor(NetBuilder& net, const NetBuilder::Tensor& x, const std::string& prefix)>;
// A Llama decoder whose blocks end with `mlp_half`: the token embedding "tok_embeddings", the
// options' `layers` blocks of llama_attention then `mlp_half`, the final "norm" and the untied
// head "output" over the options' `vocab`, on `seq` tokens.
Model build_llama_decoder(const std::string& name, const ZooOptions& options, const LlamaShape& shape,
                          const LlamaMlpHalf& mlp_half);

// Mixtral-style mixture of experts (Jiang et al. 2024): Llama's blocks with the dense MLP half
// replaced by a sparse one, h{i}.ffn_norm -> h{i}.feed_forward.moe (options experts, top_k, the
// experts' ffn, and capacity in percent, 0 = none) -> residual.
Model build_moe(const std::string& name, const ZooOptions& options);

}  // namespace splitbrain::model::zoo
