#pragma once
// Collects layers by name and turns them into a validated Model. Inputs may name layers added
// later (model files need not be sorted); build() orders them, rejects cycles, infers shapes and
// costs, and reports the first problem as a ModelError naming the source, the layer and the field.

#include <string>
#include <vector>

#include "model/model.h"

namespace splitbrain::model {

struct LayerSpec {
  std::string name;
  OpKind kind = OpKind::input;
  OpAttrs attrs;
  std::vector<std::string> inputs;  // names of the layers this one reads, in order
};

class GraphBuilder {
 public:
  // `source` names where the layers come from in error messages: a file path or a zoo entry.
  GraphBuilder(std::string model_name, std::string source);

  // Adds a layer and returns its name, so zoo code can chain: x = b.add(...{x}).
  const std::string& add(LayerSpec spec);
  const std::string& add(std::string name, OpKind kind, OpAttrs attrs, std::vector<std::string> inputs);
  // A name not used yet: prefix + "1", prefix + "2", ...
  std::string fresh_name(std::string_view prefix) const;

  Model build() const;

 private:
  std::string model_name_;
  std::string source_;
  std::vector<LayerSpec> specs_;
};

}  // namespace splitbrain::model
