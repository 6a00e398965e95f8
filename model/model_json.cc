#include "model/model_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.h"
#include "model/file_io.h"
#include "model/graph_builder.h"
#include "model/json_object_reader.h"
#include "model/model_file_readers.h"
#include "model/op_unit.h"
#include "model/zoo.h"

namespace splitbrain::model {
namespace {

using nlohmann::json;

}  // namespace

// Units sharing an attribute struct (maxpool and avgpool, batchnorm and layernorm) write it alike,
// so the first unit whose attributes have the type writes them.
void write_attrs(const OpAttrs& attrs, json& out) {
  for (OpKind kind : all_op_kinds()) {
    const OpUnit& unit = op_unit(kind);
    if (unit.default_attrs().index() == attrs.index()) return unit.write_attrs(attrs, out);
  }
  throw std::logic_error("attributes that no op unit takes");
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
    spec.attrs = op_unit(spec.kind).read_attrs(fields);
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
