#include "model/zoo.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "model/errors.h"
#include "model/zoo/builders.h"

namespace splitbrain::model {
namespace {

// Upper bounds of the size options, each far past today's largest nets: with every option at its
// bound each layer's counts (the largest: heads x seq^2 attention probabilities, 2^50 per sample)
// stay inside 64 bits and the graph (about 14 layers a block) builds in a moment. Totals over the
// model and a batch are checked where they are summed (model/statistics.h).
constexpr int64_t kMaxLayers = 1024;               // GPT-3 has 96 blocks
constexpr int64_t kMaxWidth = int64_t{1} << 20;    // hidden features; GPT-3 is 12288 wide
constexpr int64_t kMaxHeads = 1024;                // GPT-3 has 96
constexpr int64_t kMaxTokens = int64_t{1} << 20;   // sequence length and learned positions
constexpr int64_t kMaxClasses = int64_t{1} << 24;  // also the vocabulary: GPT-2's is 50257

std::vector<ZooOption> classes_option(int64_t classes) {
  return {{"classes", classes, 1, kMaxClasses, "number of output classes"}};
}

std::vector<ZooOption> gpt_options(int64_t layers, int64_t hidden, int64_t heads, int64_t sequence) {
  return {{"layers", layers, 1, kMaxLayers, "transformer blocks"},
          {"hidden", hidden, 1, kMaxWidth, "model width"},
          {"heads", heads, 1, kMaxHeads, "attention heads (they divide the width)"},
          {"seq", sequence, 1, kMaxTokens, "sequence length (tokens per sample)"},
          {"vocab", 50257, 1, kMaxClasses, "vocabulary size"},
          {"positions", std::max<int64_t>(sequence, 1024), 1, kMaxTokens, "learned positions (at least seq)"},
          {"attn_dropout", 0, 0, 99,
           "dropout on the attention probabilities, in percent (Megatron-LM: 10; the executor runs 0)"},
          {"untied", 0, 0, 1, "1: the output head has its own weight instead of the token embedding's"}};
}

// Llama 3's published shapes share the vocabulary, the rotary base and the context length.
constexpr int64_t kLlama3Vocabulary = 128256;
constexpr int64_t kLlama3RopeTheta = 500000;
constexpr int64_t kLlama3Sequence = 8192;
constexpr int64_t kMaxRopeTheta = 1'000'000'000;  // Llama 3 uses 500000

// seq, vocab and rope_theta default to Llama 3's; Mixtral's differ.
std::vector<ZooOption> llama_options(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                                     int64_t sequence = kLlama3Sequence, int64_t vocabulary = kLlama3Vocabulary,
                                     int64_t rope_theta = kLlama3RopeTheta) {
  return {
      {"layers", layers, 1, kMaxLayers, "transformer blocks"},
      {"hidden", hidden, 1, kMaxWidth, "model width"},
      {"heads", heads, 1, kMaxHeads, "query heads (they divide the width: head_dim = hidden / heads)"},
      {"kv_heads", kv_heads, 1, kMaxHeads, "key/value heads (they divide heads; = heads: multi-head attention)"},
      {"ffn", ffn, 1, kMaxWidth, "inner width of the SwiGLU MLP"},
      {"seq", sequence, 1, kMaxTokens, "sequence length (tokens per sample)"},
      {"vocab", vocabulary, 1, kMaxClasses, "vocabulary size"},
      {"rope_theta", rope_theta, 0, kMaxRopeTheta,
       "rotary position base (Llama 2: 10000, Llama 3: 500000); 0: no rotary positions"},
      {"fused", 1, 0, 1, "1: flash-style attention keeps only the softmax statistics (as FlashAttention, cuDNN SDPA)"}};
}

// Mixtral 8x7B's shape: Mistral 7B's blocks (32 x 4096, 32 heads over 8 key/value heads, 4096
// tokens, a 32000-token vocabulary, rotary base 10^6), each MLP 8 experts of 14336, top 2.
constexpr int64_t kMixtralSequence = 4096;
constexpr int64_t kMixtralVocabulary = 32000;
constexpr int64_t kMixtralRopeTheta = 1'000'000;
constexpr int64_t kMaxExperts = 4096;            // DeepSeek-V3 has 256 routed experts
constexpr int64_t kMaxCapacityPercent = 10'000;  // Switch Transformer trains at 100-200

// Llama's options and the experts'.
std::vector<ZooOption> moe_options(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                                   int64_t experts, int64_t top_k) {
  std::vector<ZooOption> options =
      llama_options(layers, hidden, heads, kv_heads, ffn, kMixtralSequence, kMixtralVocabulary, kMixtralRopeTheta);
  options.push_back({"experts", experts, 1, kMaxExperts, "experts per MLP (each a SwiGLU MLP ffn wide)"});
  options.push_back({"top_k", top_k, 1, kMaxExperts, "experts each token is routed to (at most experts)"});
  options.push_back({"capacity", 0, 0, kMaxCapacityPercent,
                     "tokens an expert computes, in percent of its balanced share (Switch Transformer's capacity "
                     "factor x 100); those routed beyond it are dropped; 0: no limit"});
  return options;
}

template <int Depth>
ZooEntry vgg_entry() {
  return {fmt::format("vgg{}", Depth), fmt::format("VGG-{}, torchvision layout, 224x224x3, 1000 classes", Depth),
          classes_option(1000), [](const std::string& name, const ZooOptions& o) {
            return zoo::build_vgg_imagenet(name, Depth, o.at("classes"));
          }};
}

template <int Depth>
ZooEntry vgg_cifar_entry() {
  return {fmt::format("vgg{}-cifar10", Depth),
          fmt::format("VGG-{} conv stack on 32x32x3 + classifier 512-4096-4096-10 (SplitBrain's setting)", Depth),
          classes_option(10), [](const std::string& name, const ZooOptions& o) {
            return zoo::build_vgg_cifar(name, Depth, o.at("classes"));
          }};
}

template <int Depth>
ZooEntry resnet_entry() {
  return {fmt::format("resnet{}", Depth), fmt::format("ResNet-{} (v1.5), torchvision layout, 224x224x3", Depth),
          classes_option(1000),
          [](const std::string& name, const ZooOptions& o) { return zoo::build_resnet(name, Depth, o.at("classes")); }};
}

const std::vector<ZooEntry>& entries() {
  static const std::vector<ZooEntry> kEntries = {
      vgg_entry<11>(),
      vgg_entry<13>(),
      vgg_entry<16>(),
      vgg_entry<19>(),
      vgg_cifar_entry<11>(),
      vgg_cifar_entry<16>(),
      {"alexnet", "AlexNet, torchvision layout, 224x224x3", classes_option(1000),
       [](const std::string& name, const ZooOptions& o) { return zoo::build_alexnet(name, o.at("classes")); }},
      resnet_entry<18>(),
      resnet_entry<50>(),
      {"mlp",
       "multi-layer perceptron on 28x28x1 (Fashion-MNIST)",
       {{"hidden", 512, 1, kMaxWidth, "width of each hidden layer"},
        {"layers", 2, 1, kMaxLayers, "hidden layers"},
        {"classes", 10, 1, kMaxClasses, "classes"}},
       zoo::build_mlp},
      {"fashion-vgg",
       "small VGG-style net for 28x28x1 Fashion-MNIST: 4 convs, FC 3136-256-10",
       {},
       [](const std::string& name, const ZooOptions&) { return zoo::build_fashion_vgg(name); }},
      {"gpt", "GPT-2-style transformer; set its size with options", gpt_options(12, 768, 12, 1024), zoo::build_gpt},
      {"gpt2-small", "GPT-2 small: 12 layers, 768 wide, 12 heads, 1024 tokens, tied embeddings",
       gpt_options(12, 768, 12, 1024), zoo::build_gpt},
      {"gpt3-175b", "GPT-3 175B shape: 96 layers, 12288 wide, 96 heads, 2048 tokens", gpt_options(96, 12288, 96, 2048),
       zoo::build_gpt},
      {"llama", "Llama-style transformer (grouped-query attention, RoPE, SwiGLU, RMSNorm); set its size with options",
       llama_options(32, 4096, 32, 8, 14336), zoo::build_llama},
      {"llama3-8b", "Llama 3 8B: 32 layers, 4096 wide, 32 heads (8 key/value), FFN 14336, 8192 tokens",
       llama_options(32, 4096, 32, 8, 14336), zoo::build_llama},
      {"llama3-70b", "Llama 3 70B: 80 layers, 8192 wide, 64 heads (8 key/value), FFN 28672, 8192 tokens",
       llama_options(80, 8192, 64, 8, 28672), zoo::build_llama},
      {"llama3-405b", "Llama 3.1 405B: 126 layers, 16384 wide, 128 heads (8 key/value), FFN 53248, 8192 tokens",
       llama_options(126, 16384, 128, 8, 53248), zoo::build_llama},
      {"moe",
       "Mixtral-style mixture of experts (Llama blocks, a sparse MLP of top_k of `experts` SwiGLU experts); set "
       "its size with options",
       moe_options(32, 4096, 32, 8, 14336, 8, 2), zoo::build_moe},
      {"mixtral-8x7b",
       "Mixtral 8x7B: 32 layers, 4096 wide, 32 heads (8 key/value), 8 experts of FFN 14336, top 2, 4096 tokens",
       moe_options(32, 4096, 32, 8, 14336, 8, 2), zoo::build_moe},
  };
  return kEntries;
}

const ZooEntry* find_entry(std::string_view name) {
  for (const ZooEntry& entry : entries()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::string_view spec_name(std::string_view spec) { return spec.substr(0, spec.find(':')); }

const ZooOption* find_option(const ZooEntry& entry, std::string_view name) {
  for (const ZooOption& option : entry.options) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

// "k=v,k=v" -> options, starting from the entry's defaults; each option at most once.
ZooOptions parse_options(const ZooEntry& entry, std::string_view spec) {
  ZooOptions options;
  for (const ZooOption& option : entry.options) options[option.name] = option.default_value;
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return options;

  std::vector<std::string> known;
  for (const ZooOption& option : entry.options) known.push_back(option.name);
  std::vector<std::string_view> given;
  std::string_view rest = spec.substr(colon + 1);
  while (!rest.empty()) {
    const std::string_view item = rest.substr(0, rest.find(','));
    rest = item.size() < rest.size() ? rest.substr(item.size() + 1) : std::string_view{};
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const ZooOption* option = find_option(entry, key);
    if (option == nullptr) {
      throw ModelError(fmt::format("zoo model '{}': unknown option '{}' (options: {})", entry.name, key,
                                   known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    // Last-one-wins would hide a typo in a long spec: the value used is the one not meant.
    if (std::find(given.begin(), given.end(), key) != given.end()) {
      throw ModelError(fmt::format("zoo model '{}': option '{}' is given twice", entry.name, key));
    }
    given.push_back(key);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    int64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size() || parsed < option->min_value ||
        parsed > option->max_value) {
      throw ModelError(fmt::format("zoo model '{}': option '{}' must be an integer from {} to {}, got '{}'", entry.name,
                                   key, option->min_value, option->max_value, value));
    }
    options[option->name] = parsed;
  }
  return options;
}

}  // namespace

std::span<const ZooEntry> zoo_entries() { return entries(); }

bool is_zoo_spec(std::string_view spec) { return find_entry(spec_name(spec)) != nullptr; }

Model build_zoo_model(std::string_view spec) {
  const ZooEntry* entry = find_entry(spec_name(spec));
  if (entry == nullptr) {
    std::vector<std::string_view> names;
    for (const ZooEntry& e : entries()) names.push_back(e.name);
    throw ModelError(fmt::format("unknown zoo model '{}' (known: {})", spec_name(spec), fmt::join(names, ", ")));
  }
  return entry->build(std::string(spec), parse_options(*entry, spec));
}

}  // namespace splitbrain::model
