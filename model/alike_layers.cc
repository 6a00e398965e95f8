#include "model/alike_layers.h"

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "model/model_json.h"

namespace splitbrain::model {

std::vector<int> alike_layer_classes(const Model& net) {
  std::unordered_map<std::string, int> ids;
  std::vector<int> classes;
  classes.reserve(static_cast<size_t>(net.size()));
  for (const Layer& layer : net.layers()) {
    nlohmann::json signature = {{"op", op_name(layer.kind)},
                                {"out", layer.output_shape},
                                {"tokens", layer.output_is_tokens},
                                {"grad", layer.needs_input_gradient},
                                {"params", layer.cost.params}};
    write_attrs(layer.attrs, signature);
    for (int producer : layer.inputs) {
      signature["in"].push_back(net.layer(producer).output_shape);
      signature["in_tokens"].push_back(net.layer(producer).output_is_tokens);
    }
    const auto [it, inserted] = ids.emplace(signature.dump(), static_cast<int>(ids.size()));
    classes.push_back(it->second);
  }
  return classes;
}

}  // namespace splitbrain::model
