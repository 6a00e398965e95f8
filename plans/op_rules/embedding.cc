// embedding: batch; positions; the table's columns (out); its rows, the vocabulary (in: ids
// outside a rank's rows give zeros, a partial sum).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& a = rule.layer().attr<model::EmbeddingAttrs>();
  out.inputs.push_back(rule.layout(request.input_shapes[0], {{R::batch, 0}, {R::spatial, 1}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, 2}, {R::spatial, 1}}, {R::in});
  out.input_gradients.push_back(out.inputs[0]);  // token ids have no gradient; kept for symmetry
  out.parameters.push_back(rule.parameter({a.num_embeddings, a.embedding_dim}, {{R::in, 0}, {R::out, 1}}));
}

}  // namespace

const OpRules embedding = {model::OpKind::embedding, any_role, layouts};

}  // namespace splitbrain::plans::op_rules_of
