#include "model/model_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.h"
#include "model/file_io.h"
#include "model/graph_builder.h"
#include "model/json_object_reader.h"
#include "model/model_file_readers.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

using nlohmann::json;

// A 2-D size is written [h, w]; a single integer n means [n, n].
Size2 read_size2(JsonObjectReader& fields, std::string_view key, std::optional<Size2> fallback) {
  const json* value = fields.optional(key);
  if (value == nullptr) {
    if (!fallback) fields.required(key);  // throws "missing required field"
    return *fallback;
  }
  if (value->is_number()) {
    const int64_t n = fields.required_int(key);
    return {n, n};
  }
  if (value->is_array() && value->size() == 2) {
    const JsonArrayReader pair = fields.array(key);
    return {pair.int_at(0), pair.int_at(1)};
  }
  fields.fail(key, fmt::format("expected an integer or [height, width], got {}", describe_json(*value)));
}

json size2_to_json(Size2 size) { return json::array({size.h, size.w}); }

OpAttrs read_attrs(OpKind kind, JsonObjectReader& fields) {
  switch (kind) {
    case OpKind::input:
      return InputAttrs{fields.required_int_list("shape"), fields.optional_bool("tokens", false)};
    case OpKind::conv2d: {
      Conv2dAttrs a;
      a.out_channels = fields.required_int("out_channels");
      a.kernel = read_size2(fields, "kernel", std::nullopt);
      a.stride = read_size2(fields, "stride", Size2{1, 1});
      a.padding = read_size2(fields, "padding", Size2{0, 0});
      a.dilation = read_size2(fields, "dilation", Size2{1, 1});
      a.groups = fields.optional_int("groups", 1);
      a.bias = fields.optional_bool("bias", true);
      return a;
    }
    case OpKind::linear: {
      LinearAttrs a;
      a.in_features = fields.optional_int("in_features", 0);
      a.out_features = fields.required_int("out_features");
      a.bias = fields.optional_bool("bias", true);
      a.tied_to = fields.optional_string("tied_to", "");
      if (fields.has("in_features") && a.in_features <= 0) fields.fail("in_features", "must be positive");
      return a;
    }
    case OpKind::maxpool:
    case OpKind::avgpool: {
      Pool2dAttrs a;
      a.kernel = read_size2(fields, "kernel", std::nullopt);
      a.stride = read_size2(fields, "stride", a.kernel);
      a.padding = read_size2(fields, "padding", Size2{0, 0});
      a.ceil_mode = fields.optional_bool("ceil_mode", false);
      return a;
    }
    case OpKind::adaptive_avgpool:
      return AdaptiveAvgPoolAttrs{read_size2(fields, "output_size", Size2{1, 1})};
    case OpKind::dropout:
      return DropoutAttrs{fields.optional_number("probability", 0.5)};
    case OpKind::batchnorm:
    case OpKind::layernorm:
      return NormAttrs{fields.optional_number("epsilon", 1e-5)};
    case OpKind::concat:
      return ConcatAttrs{fields.optional_int("axis", 0)};
    case OpKind::embedding:
      return EmbeddingAttrs{fields.required_int("num_embeddings"), fields.required_int("embedding_dim"),
                            fields.optional_bool("positional", false)};
    case OpKind::matmul:
      return MatMulAttrs{fields.optional_bool("transpose_b", false)};
    case OpKind::self_attention:
      return SelfAttentionAttrs{fields.required_int("heads"), fields.optional_bool("causal", true),
                                fields.optional_number("dropout", 0.0)};
    case OpKind::relu:
    case OpKind::gelu:
    case OpKind::flatten:
    case OpKind::add:
    case OpKind::softmax_cross_entropy:
      return NoAttrs{};
  }
  throw std::logic_error("unhandled OpKind in model_from_json");
}

}  // namespace

void write_attrs(const OpAttrs& attrs, json& out) {
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, InputAttrs>) {
          out["shape"] = a.shape;
          out["tokens"] = a.tokens;
        } else if constexpr (std::is_same_v<A, Conv2dAttrs>) {
          out["out_channels"] = a.out_channels;
          out["kernel"] = size2_to_json(a.kernel);
          out["stride"] = size2_to_json(a.stride);
          out["padding"] = size2_to_json(a.padding);
          out["dilation"] = size2_to_json(a.dilation);
          out["groups"] = a.groups;
          out["bias"] = a.bias;
        } else if constexpr (std::is_same_v<A, LinearAttrs>) {
          out["in_features"] = a.in_features;
          out["out_features"] = a.out_features;
          out["bias"] = a.bias;
          if (!a.tied_to.empty()) out["tied_to"] = a.tied_to;
        } else if constexpr (std::is_same_v<A, Pool2dAttrs>) {
          out["kernel"] = size2_to_json(a.kernel);
          out["stride"] = size2_to_json(a.stride);
          out["padding"] = size2_to_json(a.padding);
          out["ceil_mode"] = a.ceil_mode;
        } else if constexpr (std::is_same_v<A, AdaptiveAvgPoolAttrs>) {
          out["output_size"] = size2_to_json(a.output_size);
        } else if constexpr (std::is_same_v<A, DropoutAttrs>) {
          out["probability"] = a.probability;
        } else if constexpr (std::is_same_v<A, NormAttrs>) {
          out["epsilon"] = a.epsilon;
        } else if constexpr (std::is_same_v<A, ConcatAttrs>) {
          out["axis"] = a.axis;
        } else if constexpr (std::is_same_v<A, EmbeddingAttrs>) {
          out["num_embeddings"] = a.num_embeddings;
          out["embedding_dim"] = a.embedding_dim;
          out["positional"] = a.positional;
        } else if constexpr (std::is_same_v<A, MatMulAttrs>) {
          out["transpose_b"] = a.transpose_b;
        } else if constexpr (std::is_same_v<A, SelfAttentionAttrs>) {
          out["heads"] = a.heads;
          out["causal"] = a.causal;
          if (a.dropout > 0.0) out["dropout"] = a.dropout;
        } else {
          static_assert(std::is_same_v<A, NoAttrs>, "every attribute struct must be written");
        }
      },
      attrs);
}

namespace {

std::string layer_where(const std::string& source, const json& layer, size_t index) {
  if (layer.is_object() && layer.contains("name") && layer["name"].is_string()) {
    return fmt::format("{}: layer '{}'", source, layer["name"].get<std::string>());
  }
  return fmt::format("{}: layers[{}]", source, index);
}

}  // namespace

namespace {

// The layers of a model document, ready to build (the document may go before the build: a
// large model's document is as big as the model).
GraphBuilder read_model_layers(const json& document, const std::string& source) {
  JsonObjectReader top(document, source, throwing<ModelError>);
  const std::string format = top.required_string("format");
  if (format != kModelFormatName) {
    top.fail("format", fmt::format("expected \"{}\", got \"{}\" (is this a model file?)", kModelFormatName, format));
  }
  const int64_t version = top.required_int("version");
  if (version != kModelFormatVersion) {
    top.fail("version",
             fmt::format("this splitbrain reads version {}, the file is version {}", kModelFormatVersion, version));
  }
  const std::string name = top.required_string("name");
  const JsonArrayReader layers = top.array("layers");
  // Reading is linear (1.6 M layers take seconds), but a file far beyond any network is refused
  // before any of its layers is built.
  constexpr size_t kMostLayers = 10'000'000;
  if (layers.size() > kMostLayers) {
    top.fail("layers", fmt::format("{} layers; a model may have at most {}", layers.size(), kMostLayers));
  }
  top.optional_string("description", "");
  top.reject_unknown_keys();

  GraphBuilder graph(name, source);
  std::string previous;
  for (size_t i = 0; i < layers.size(); ++i) {
    // Each layer is its own `where` ("net.json: layer 'fc'") rather than a child path
    // ("layers[3]"): users know their layers by name.
    JsonObjectReader fields(layers.at(i), layer_where(source, layers.at(i), i), throwing<ModelError>);
    LayerSpec spec;
    spec.name = fields.required_string("name");
    const std::string op = fields.required_string("op");
    const std::optional<OpKind> kind = op_kind_from_name(op);
    if (!kind) {
      std::vector<std::string_view> known;
      for (OpKind k : all_op_kinds()) known.push_back(op_name(k));
      fields.fail("op", fmt::format("unknown op '{}' (known: {})", op, fmt::join(known, ", ")));
    }
    spec.kind = *kind;
    // A layer without "inputs" reads the layer listed just before it: plain chains stay short.
    // optional(), not has(), so "inputs" is listed among the allowed keys in errors.
    if (fields.optional("inputs") != nullptr) {
      spec.inputs = fields.optional_string_list("inputs");
    } else if (spec.kind != OpKind::input && !previous.empty()) {
      spec.inputs = {previous};
    }
    spec.attrs = read_attrs(spec.kind, fields);
    fields.reject_unknown_keys();
    previous = graph.add(std::move(spec));
  }
  return graph;
}

}  // namespace

Model model_from_json(const json& document, const std::string& source) {
  return read_model_layers(document, source).build();
}

json model_to_json(const Model& model) {
  json layers = json::array();
  for (const Layer& layer : model.layers()) {
    json out = {{"name", layer.name}, {"op", op_name(layer.kind)}};
    if (layer.kind != OpKind::input) {
      json inputs = json::array();
      for (int producer : layer.inputs) inputs.push_back(model.layer(producer).name);
      out["inputs"] = inputs;
    }
    write_attrs(layer.attrs, out);
    layers.push_back(out);
  }
  return {{"format", kModelFormatName}, {"version", kModelFormatVersion}, {"name", model.name()}, {"layers", layers}};
}

// Parsed strictly (duplicate keys are errors): a model file is
// user input, and a repeated key would otherwise silently override the first.
Model load_model_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  const GraphBuilder graph =
      read_model_layers(parse_json_strict(read_text_file(path), source, throwing<ModelError>), source);
  return graph.build();
}

void save_model_file(const Model& model, const std::filesystem::path& path) {
  write_file_atomically(path, model_to_json(model).dump(2) + "\n");
}

Model resolve_model(std::string_view zoo_spec_or_path) {
  if (is_zoo_spec(zoo_spec_or_path)) return build_zoo_model(zoo_spec_or_path);
  const std::filesystem::path path(zoo_spec_or_path);
  if (const ModelFileReader* reader = find_model_file_reader(path)) return (*reader)(path);
  std::error_code ec;
  if (std::filesystem::exists(path, ec) || path.extension() == ".json") return load_model_file(path);
  std::vector<std::string_view> names;
  for (const ZooEntry& entry : zoo_entries()) names.push_back(entry.name);
  throw ModelError(fmt::format("model '{}' is neither a zoo model ({}; see `splitbrain models`) nor an existing file",
                               zoo_spec_or_path, fmt::join(names, ", ")));
}

}  // namespace splitbrain::model
