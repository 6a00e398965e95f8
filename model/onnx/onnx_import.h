#pragma once
// Reads an ONNX model (model/README.md: "ONNX models" lists what maps to what) into our layer
// graph. Only the structure is read: layer kinds, sizes and shapes, never weight values. The
// net is the graph a training step runs, so an ONNX graph that ends in logits gets the loss the
// zoo's nets end in (softmax cross-entropy).
//
// Kept apart from the model library (which knows JSON only) so that it alone links ONNX and
// protobuf; a program that wants `--model file.onnx` calls register_onnx_model_reader() once.

#include <filesystem>
#include <string>

#include "model/model.h"

namespace splitbrain::model {

// Throws ModelError (or InputError) naming the file, and the node and its op type when a node
// cannot be imported.
Model import_onnx_model(const std::filesystem::path& path);
// The same for a file's bytes already read (the fuzz target's entry): the model is called
// `name`, and `source` names the bytes in errors.
Model import_onnx_model(const std::string& bytes, const std::string& name, const std::string& source);

// Makes resolve_model (model/model_json.h) read ".onnx" files with import_onnx_model.
void register_onnx_model_reader();

}  // namespace splitbrain::model
