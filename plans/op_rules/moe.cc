// moe: batch and positions split (each token is routed and computed on its own), every expert's
// weights whole on every rank, as data parallelism keeps them. Splitting the experts over ranks
// (expert parallelism: each rank holds some experts and tokens travel to them by all-to-all) or
// an expert's ffn over a tensor-parallel group is not built, so `out` and `in` are refused with
// that reason.
//
// Per-token in Megatron-LM's sense (OpRules::per_token): it reads and gives [T, D] activations
// whose features tensor parallelism never splits, so sequence parallelism splits it by position
// like the norms and residual adds around it.

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  same_layout_everywhere(rule, request, out);
  const auto& a = rule.layer().attr<model::MoeAttrs>();
  const int64_t features = request.output_shape.back();
  // As linear's weights, out x in: the router, then the experts' w1 (gate), w3 (up) and w2
  // (down) stacked along a leading expert dimension, which expert parallelism would split.
  out.parameters.push_back(rule.parameter({a.experts, features}, {}));
  out.parameters.push_back(rule.parameter({a.experts, a.ffn, features}, {}));
  out.parameters.push_back(rule.parameter({a.experts, a.ffn, features}, {}));
  out.parameters.push_back(rule.parameter({a.experts, features, a.ffn}, {}));
}

}  // namespace

// No kernel problem of its own: the simulator prices it as matrix products by its unit's FLOPs.
const OpRules moe = {model::OpKind::moe,
                     batch_or_spatial,
                     layouts,
                     nullptr,
                     true,
                     "expert parallelism is not built yet (every rank holds every expert whole)"};

}  // namespace splitbrain::plans::op_rules_of
