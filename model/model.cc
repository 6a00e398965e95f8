#include "model/model.h"

#include <algorithm>

#include "model/alike_layers.h"

namespace splitbrain::model {

Model::Model(std::string name, std::vector<Layer> layers)
    : name_(std::move(name)), layers_(std::move(layers)), graph_(layers_.size()) {
  for (size_t consumer = 0; consumer < layers_.size(); ++consumer) {
    for (int producer : layers_[consumer].inputs) boost::add_edge(static_cast<size_t>(producer), consumer, graph_);
  }
}

std::span<const int> Model::alike_classes() const {
  std::call_once(alike_->worked_out, [this] { alike_->classes = alike_layer_classes(*this); });
  return alike_->classes;
}

int Model::tied_table_layer(int index) const {
  const Layer& l = layer(index);
  if (l.kind != OpKind::linear || l.attr<LinearAttrs>().tied_to.empty()) return -1;
  return find(l.attr<LinearAttrs>().tied_to);
}

int Model::find(std::string_view layer_name) const {
  auto it = std::find_if(layers_.begin(), layers_.end(), [&](const Layer& l) { return l.name == layer_name; });
  return it == layers_.end() ? -1 : static_cast<int>(it - layers_.begin());
}

int64_t Model::parameter_count() const {
  int64_t total = 0;
  for (const Layer& layer : layers_) total += layer.cost.params;
  return total;
}

}  // namespace splitbrain::model
