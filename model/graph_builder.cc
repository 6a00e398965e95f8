#include "model/graph_builder.h"

#include <boost/graph/strong_components.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <queue>
#include <span>
#include <unordered_map>

#include "model/error_site.h"
#include "model/errors.h"
#include "model/layer_cost.h"
#include "model/shape_inference.h"

namespace splitbrain::model {
namespace {

// Producer -> consumer edges between spec indices, after checking every input name exists.
LayerGraph connect(const std::vector<LayerSpec>& specs, const std::string& source) {
  std::unordered_map<std::string_view, size_t> index_of;
  index_of.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ErrorSite site{source, specs[i].name};
    if (specs[i].name.empty()) site.fail("name", fmt::format("layer #{} has an empty name", i));
    if (!index_of.emplace(specs[i].name, i).second) site.fail("name", "is used by more than one layer");
  }
  LayerGraph graph(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const LayerSpec& spec = specs[i];
    const ErrorSite site{source, spec.name};
    const auto [min_inputs, max_inputs] = input_arity(spec.kind);
    const auto count = static_cast<int>(spec.inputs.size());
    if (count < min_inputs || (max_inputs >= 0 && count > max_inputs)) {
      const std::string expected = max_inputs < 0             ? fmt::format("at least {}", min_inputs)
                                   : min_inputs == max_inputs ? fmt::format("{}", min_inputs)
                                                              : fmt::format("{} to {}", min_inputs, max_inputs);
      site.fail("inputs", fmt::format("{} takes {} input(s), got {}", op_name(spec.kind), expected, count));
    }
    for (const std::string& input : spec.inputs) {
      auto it = index_of.find(input);
      if (it == index_of.end()) site.fail("inputs", fmt::format("no layer is named '{}'", input));
      boost::add_edge(it->second, i, graph);
    }
  }
  return graph;
}

// Throws naming the layers of a cycle, if the graph has one.
void reject_cycles(const LayerGraph& graph, const std::vector<LayerSpec>& specs, const std::string& source) {
  std::vector<size_t> component(boost::num_vertices(graph));
  const size_t components = boost::strong_components(graph, component.data());
  std::vector<std::vector<std::string_view>> members(components);
  for (size_t v = 0; v < component.size(); ++v) members[component[v]].push_back(specs[v].name);
  for (size_t v = 0; v < component.size(); ++v) {
    const bool self_loop = boost::edge(v, v, graph).second;
    if (members[component[v]].size() > 1 || self_loop) {
      ErrorSite{source, specs[v].name}.fail(
          "inputs", fmt::format("is part of a cycle: {}", fmt::join(members[component[v]], " -> ")));
    }
  }
}

// Kahn's algorithm taking the smallest ready index first, so a file that lists its layers in
// order keeps that order, and any other file gets a deterministic one.
std::vector<size_t> stable_topological_order(const LayerGraph& graph) {
  const size_t n = boost::num_vertices(graph);
  std::vector<size_t> waiting_on(n);
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t v = 0; v < n; ++v) {
    waiting_on[v] = boost::in_degree(v, graph);
    if (waiting_on[v] == 0) ready.push(v);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    const size_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
      if (--waiting_on[boost::target(*e, graph)] == 0) ready.push(boost::target(*e, graph));
    }
  }
  return order;
}

void check_tied_weight(const Layer& layer, std::span<const Layer> layers, const Model& partial_lookup,
                       const std::string& source) {
  const auto& a = layer.attr<LinearAttrs>();
  const ErrorSite site{source, layer.name};
  const int owner = partial_lookup.find(a.tied_to);
  if (owner < 0) site.fail("tied_to", fmt::format("no layer is named '{}'", a.tied_to));
  const Layer& table = layers[static_cast<size_t>(owner)];
  if (table.kind != OpKind::embedding) site.fail("tied_to", fmt::format("'{}' is not an embedding", a.tied_to));
  const auto& e = table.attr<EmbeddingAttrs>();
  if (e.num_embeddings != a.out_features || e.embedding_dim != a.in_features) {
    site.fail("tied_to", fmt::format("the table of '{}' is {} x {} but this layer's weight is {} x {}", a.tied_to,
                                     e.num_embeddings, e.embedding_dim, a.out_features, a.in_features));
  }
}

}  // namespace

GraphBuilder::GraphBuilder(std::string model_name, std::string source)
    : model_name_(std::move(model_name)), source_(std::move(source)) {}

const std::string& GraphBuilder::add(LayerSpec spec) {
  specs_.push_back(std::move(spec));
  return specs_.back().name;
}

const std::string& GraphBuilder::add(std::string name, OpKind kind, OpAttrs attrs, std::vector<std::string> inputs) {
  return add(LayerSpec{std::move(name), kind, std::move(attrs), std::move(inputs)});
}

std::string GraphBuilder::fresh_name(std::string_view prefix) const {
  for (size_t n = 1;; ++n) {
    std::string candidate = fmt::format("{}{}", prefix, n);
    if (std::none_of(specs_.begin(), specs_.end(), [&](const LayerSpec& s) { return s.name == candidate; })) {
      return candidate;
    }
  }
}

Model GraphBuilder::build() const {
  if (specs_.empty()) ErrorSite{source_, ""}.fail("layers", "the model has no layers");
  const LayerGraph graph = connect(specs_, source_);
  reject_cycles(graph, specs_, source_);
  const std::vector<size_t> order = stable_topological_order(graph);

  std::unordered_map<std::string_view, size_t> index_of;
  index_of.reserve(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) index_of.emplace(specs_[i].name, i);
  std::vector<int> position(specs_.size());
  for (size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<int>(p);

  std::vector<Layer> layers(order.size());
  std::vector<bool> trainable_upstream(order.size(), false);  // this layer's output depends on parameters
  // The model's weights at 8 bytes a parameter (the widest count made of them) fit 64 bits, so no
  // total of parameters, weight bytes or gradient bytes wraps around downstream.
  constexpr int64_t kWidestParameterBytes = 8;
  int64_t parameter_bytes = 0;
  for (size_t p = 0; p < order.size(); ++p) {
    const LayerSpec& spec = specs_[order[p]];
    Layer& layer = layers[p];
    layer.name = spec.name;
    layer.kind = spec.kind;
    layer.attrs = spec.attrs;
    if (layer.attrs.index() != default_attrs(spec.kind).index()) {
      throw std::logic_error(
          fmt::format("layer '{}': attributes do not belong to a {}", spec.name, op_name(spec.kind)));
    }
    std::vector<const Layer*> producers;
    for (const std::string& input : spec.inputs) {
      const int producer = position[index_of.at(input)];
      layer.inputs.push_back(producer);
      layers[static_cast<size_t>(producer)].consumers.push_back(static_cast<int>(p));
      producers.push_back(&layers[static_cast<size_t>(producer)]);
      layer.needs_input_gradient = layer.needs_input_gradient || trainable_upstream[static_cast<size_t>(producer)];
    }
    const ErrorSite site{source_, layer.name};
    infer_output_shape(layer, producers, site);
    try {
      // Sizes past 64 bits are refused where they are counted (model/shape.h), named here.
      (void)num_elements(layer.output_shape);
      layer.cost = compute_layer_cost(layer, producers);
      parameter_bytes =
          checked_sum(parameter_bytes, checked_product(layer.cost.params, kWidestParameterBytes, "parameter bytes"),
                      "the model's parameter bytes up to this layer");
    } catch (const SizeOverflowError& e) {
      site.fail("size", e.what());
    }
    trainable_upstream[p] = layer.needs_input_gradient || layer.cost.params > 0 ||
                            (layer.kind == OpKind::linear && !layer.attr<LinearAttrs>().tied_to.empty());
  }
  Model model(model_name_, std::move(layers));
  for (const Layer& layer : model.layers()) {
    if (layer.kind == OpKind::linear && !layer.attr<LinearAttrs>().tied_to.empty()) {
      check_tied_weight(layer, model.layers(), model, source_);
    }
  }
  return model;
}

}  // namespace splitbrain::model
