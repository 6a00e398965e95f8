#include "model/onnx/onnx_import_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.h"

namespace splitbrain::model::onnx_import {
namespace {

bool is_integer_type(int32_t element_type) {
  return element_type == onnx::TensorProto::INT64 || element_type == onnx::TensorProto::INT32;
}

}  // namespace

std::string ImportState::layer_for(const std::string& tensor, const onnx::NodeProto& reader) {
  const auto it = layer_of_tensor_.find(tensor);
  if (it != layer_of_tensor_.end()) return it->second;
  const onnx::ValueInfoProto* input = graph_.data_input(tensor);
  if (input == nullptr) {
    throw ModelError(fmt::format("{}: {}: reads tensor '{}', which no imported layer gives", graph_.source(),
                                 graph_.describe(reader), tensor));
  }
  const std::optional<Shape> shape = graph_.full_shape(tensor);
  if (!shape || shape->size() < 2) {
    throw ModelError(fmt::format("{}: input '{}': needs a known shape with the batch first (export with fixed sizes)",
                                 graph_.source(), tensor));
  }
  const bool tokens = is_integer_type(input->type().tensor_type().elem_type());
  const std::string name = unique_name(tensor);
  specs_.push_back({name, OpKind::input, InputAttrs{Shape(shape->begin() + 1, shape->end()), tokens}, {}});
  spec_of_layer_[name] = specs_.size() - 1;
  layer_of_tensor_[tensor] = name;
  return name;
}

std::string ImportState::token_input_layer(const onnx::NodeProto& reader) {
  std::vector<std::string> token_inputs;
  for (const onnx::ValueInfoProto& input : graph_.graph().input()) {
    if (graph_.data_input(input.name()) != nullptr && is_integer_type(input.type().tensor_type().elem_type())) {
      token_inputs.push_back(input.name());
    }
  }
  if (token_inputs.size() != 1) {
    throw ModelError(fmt::format("{}: {}: a position lookup needs exactly one integer (token) input, found {} ({})",
                                 graph_.source(), graph_.describe(reader), token_inputs.size(),
                                 fmt::join(token_inputs, ", ")));
  }
  return layer_for(token_inputs.front(), reader);
}

std::string ImportState::add_layer(const onnx::NodeProto& node, OpKind kind, OpAttrs attrs,
                                   std::vector<std::string> inputs, const std::string& output_tensor) {
  const std::string name = unique_name(node.name().empty() ? output_tensor : node.name());
  specs_.push_back({name, kind, std::move(attrs), std::move(inputs)});
  spec_of_layer_[name] = specs_.size() - 1;
  layer_of_tensor_[output_tensor] = name;
  shape_checks_.push_back({output_tensor, name});
  return name;
}

std::string ImportState::add_extra_layer(const std::string& base_name, OpKind kind, OpAttrs attrs,
                                         std::vector<std::string> inputs) {
  const std::string name = unique_name(base_name);
  specs_.push_back({name, kind, std::move(attrs), std::move(inputs)});
  spec_of_layer_[name] = specs_.size() - 1;
  return name;
}

OpKind ImportState::kind_of(const std::string& layer) const { return specs_.at(spec_of_layer_.at(layer)).kind; }

std::string ImportState::embedding_with_table(const std::string& initializer) const {
  const auto it = embedding_of_table_.find(initializer);
  return it == embedding_of_table_.end() ? std::string() : it->second;
}

std::string ImportState::unique_name(const std::string& base) {
  std::string name = base;
  for (int n = 2; !names_.insert(name).second; ++n) name = fmt::format("{}_{}", base, n);
  return name;
}

}  // namespace splitbrain::model::onnx_import
