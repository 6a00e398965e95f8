// moe: batch and positions split (each token is routed and computed on its own), and expert
// parallelism: `out` splits the experts over its axes. Under `out` every rank of the group holds
// the same tokens (the input is replicated over the group, so a layer before it split by position
// is all-gathered into it) and its experts' weights, routes every token with the whole router,
// computes the rows routed to its experts and gives its share of the output as a partial sum
// (reduce-scattered or all-reduced by the layer after it). That is Megatron-LM's all-gather token
// dispatcher: its bytes do not depend on the routing, so the plan states them exactly, where an
// all-to-all dispatch sends as many rows as the routing happens to give each rank. Backward sums
// the routing weights' gradients [tokens, experts] over the group (the renormalisation couples a
// token's experts, which may lie on several ranks), so every rank computes the whole router
// gradient and the router needs no gradient sum over the group. Splitting an expert's ffn over a
// tensor-parallel group (`in`) is not built, so `in` is refused with that reason.
//
// Per-token in Megatron-LM's sense (OpRules::per_token): it reads and gives [T, D] activations
// whose features tensor parallelism never splits, so sequence parallelism splits it by position
// like the norms and residual adds around it.

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans::op_rules_of {
namespace {

constexpr int64_t kRoutingGradientBytes = 4;  // fp32, as the kernels compute them

bool batch_spatial_or_experts(ShardRole role) { return role != ShardRole::in; }

// Tokens over their ranks, the experts over the `out` group: the input whole over the group, the
// output and the input gradient partial sums over it.
void expert_parallel_layouts(const RuleContext& rule, const LayoutRequest& request, int64_t experts,
                             LayerLayouts& out) {
  using R = ShardRole;
  rule.require_divisible(R::out, "experts", experts);
  const auto& x = request.input_shapes[0];
  const int positions = x.size() == 3 ? 1 : -1;
  out.inputs.push_back(rule.layout(x, {{R::batch, 0}, {R::spatial, positions}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::spatial, positions}}, {R::out});
  out.input_gradients.push_back(rule.layout(x, {{R::batch, 0}, {R::spatial, positions}}, {R::out}));

  const std::vector<int64_t> local = local_shape(out.output, rule.mesh(), request.output_shape);
  const int64_t local_tokens = rows_of(local);
  Collective routing_gradients;
  routing_gradients.kind = CollectiveKind::all_reduce;
  routing_gradients.axes = rule.axes(R::out);
  routing_gradients.group_size = rule.ways(R::out);
  routing_gradients.buffer_bytes = local_tokens * experts * kRoutingGradientBytes;
  routing_gradients.element_bytes = kRoutingGradientBytes;
  out.backward_internal.push_back(routing_gradients);
}

void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& a = rule.layer().attr<model::MoeAttrs>();
  if (rule.splits(R::out)) {
    expert_parallel_layouts(rule, request, a.experts, out);
  } else {
    same_layout_everywhere(rule, request, out);
  }
  const int64_t features = request.output_shape.back();
  // As linear's weights, out x in: the router (whole on every rank), then the experts' w1 (gate),
  // w3 (up) and w2 (down) stacked along a leading expert dimension, which `out` splits.
  out.parameters.push_back(rule.parameter({a.experts, features}, {}));
  out.parameters.push_back(rule.parameter({a.experts, a.ffn, features}, {{R::out, 0}}));
  out.parameters.push_back(rule.parameter({a.experts, a.ffn, features}, {{R::out, 0}}));
  out.parameters.push_back(rule.parameter({a.experts, features, a.ffn}, {{R::out, 0}}));
}

}  // namespace

// No kernel problem of its own: the simulator prices it as matrix products by its unit's FLOPs.
const OpRules moe = {model::OpKind::moe,
                     batch_spatial_or_experts,
                     layouts,
                     nullptr,
                     true,
                     "splitting an expert's ffn over ranks (expert tensor parallelism) is not built yet"};

}  // namespace splitbrain::plans::op_rules_of
