// embedding: looks up rows of a num_embeddings x embedding_dim table by token id, or by position
// 0..T-1 when `positional` (GPT's learned positions).

#include <fmt/format.h>

#include <cmath>

#include "model/op_unit.h"
#include "model/ops/unit_helpers.h"

namespace splitbrain::model::ops {
namespace {

OpAttrs read(JsonObjectReader& fields) {
  return EmbeddingAttrs{fields.required_int("num_embeddings"), fields.required_int("embedding_dim"),
                        fields.optional_bool("positional", false)};
}

void write(const OpAttrs& attrs, nlohmann::json& out) {
  const auto& a = std::get<EmbeddingAttrs>(attrs);
  out["num_embeddings"] = a.num_embeddings;
  out["embedding_dim"] = a.embedding_dim;
  out["positional"] = a.positional;
}

void infer(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  const auto& a = layer.attr<EmbeddingAttrs>();
  require_positive(site, "num_embeddings", a.num_embeddings);
  require_positive(site, "embedding_dim", a.embedding_dim);
  const Layer& in = *producers[0];
  if (!in.output_is_tokens || in.output_shape.size() != 1) {
    site.fail("inputs", fmt::format("needs a token input of shape [T], but '{}' gives {}{}", in.name,
                                    shape_to_string(in.output_shape), in.output_is_tokens ? "" : " values"));
  }
  if (a.positional && in.output_shape[0] > a.num_embeddings) {
    site.fail("num_embeddings",
              fmt::format("{} positions cannot cover a sequence of {}", a.num_embeddings, in.output_shape[0]));
  }
  layer.output_shape = {in.output_shape[0], a.embedding_dim};
}

void cost(const Layer& layer, std::span<const Layer* const>, LayerCost& cost) {
  const auto& a = layer.attr<EmbeddingAttrs>();
  cost.params = checked_product(a.num_embeddings, a.embedding_dim, "parameters");
  cost.backward_weight_flops = elements(layer.output_shape);  // scatter-add of the output gradient into the table
  cost.saved.inputs = {0};                                    // the token ids
}

// GPT-2's normal(0, 0.02) table, as a uniform of the same deviation (0.02 x sqrt(3) bound).
ParameterInit init(const Layer&, int) { return {.uniform_bound = 0.02 * std::sqrt(3.0)}; }

}  // namespace

const OpUnit embedding_unit = {
    .kind = OpKind::embedding,
    .name = "embedding",
    .default_attrs = []() -> OpAttrs { return EmbeddingAttrs{}; },
    .read_attrs = read,
    .write_attrs = write,
    .infer_shape = infer,
    .cost = cost,
    .parameter_init = init,
};

}  // namespace splitbrain::model::ops
