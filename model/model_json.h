#pragma once
// The JSON model format (model/README.md documents it field by field):
//   {"format": "splitbrain-model", "version": 1, "name": "...",
//    "layers": [{"name": "data", "op": "input", "shape": [3, 32, 32]},
//               {"name": "conv1", "op": "conv2d", "inputs": ["data"], "out_channels": 64, "kernel": 3}, ...]}
// Reading is strict: unknown keys, wrong types and bad values are errors that name the file, the
// layer and the field. Writing spells out every attribute, so save-then-load is exact.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/model.h"

namespace splitbrain::model {

constexpr std::string_view kModelFormatName = "splitbrain-model";
constexpr int kModelFormatVersion = 1;

// `source` names the document in errors (usually its path).
Model model_from_json(const nlohmann::json& document, const std::string& source);
nlohmann::json model_to_json(const Model& model);

Model load_model_file(const std::filesystem::path& path);
void save_model_file(const Model& model, const std::filesystem::path& path);

// Adds the attributes of an op to a layer's JSON object, every field spelled out (what model
// files hold; also a canonical text of the attributes, e.g. to recognise identical layers).
void write_attrs(const OpAttrs& attrs, nlohmann::json& out);

// A zoo spec ("vgg16", "gpt:layers=4") or the path of a model file: JSON, or a format whose
// reader is registered for its extension (model/model_file_readers.h: .onnx in the CLI).
Model resolve_model(std::string_view zoo_spec_or_path);

}  // namespace splitbrain::model
