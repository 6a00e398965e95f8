#pragma once
// Readers for model file formats besides the JSON one, chosen by file extension. The model
// library itself reads JSON only; a format whose library it must not depend on (ONNX, in
// model/onnx/) registers its reader here once at program start, and resolve_model
// (model/model_json.h) then reads that format for every command that takes a model.

#include <filesystem>
#include <functional>
#include <string>

#include "model/model.h"

namespace splitbrain::model {

// Reads a whole model file; throws ModelError or InputError naming the file.
using ModelFileReader = std::function<Model(const std::filesystem::path& path)>;

// `extension` includes the dot, e.g. ".onnx". Registering an extension again replaces its reader.
void register_model_file_reader(const std::string& extension, ModelFileReader reader);
// The reader registered for the path's extension, or nullptr (then the file is read as JSON).
const ModelFileReader* find_model_file_reader(const std::filesystem::path& path);

}  // namespace splitbrain::model
