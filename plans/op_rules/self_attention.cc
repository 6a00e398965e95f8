// self_attention: batch, heads (out), whole key/value groups at a time, and the queries' positions
// (spatial: context parallelism).

#include <fmt/format.h>

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans::op_rules_of {
namespace {

// The fused input is group-major (model/op.h: per key/value group its query heads, its k, its
// v), so contiguous blocks of the features are whole groups, and the output's matching blocks
// are those groups' query heads: splitting `out` splits the groups. A split that does not divide
// the key/value heads would need each rank to hold copies of shared k and v (Megatron-LM
// replicates them when the tensor-parallel size exceeds the groups); that is not built.
//
// Context parallelism (`spatial`): each rank computes the queries of its block of positions
// against every key and value. Its input is whole over the sequence, so the redistribution
// before it all-gathers the fused q|k|v over the split (q included, which the rank needs only
// in part); its output is its block of positions. Its input gradient is dQ at its own positions
// and its queries' share of dK and dV at every position: a partial sum over the split, which the
// redistribution after backward reduce-scatters onto the producer's sequence split.
void layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  using R = ShardRole;
  const auto& attention = rule.layer().attr<model::SelfAttentionAttrs>();
  const int64_t kv_heads = attention.kv_head_count();
  if (rule.splits(R::out) && kv_heads % rule.ways(R::out) != 0) {
    rule.fail(R::out, fmt::format("{} kv heads (key/value groups of {} attention heads) not divisible by {} ranks: "
                                  "a split takes whole groups (replicating k and v across ranks is not built)",
                                  kv_heads, attention.heads, rule.ways(R::out)));
  }
  out.inputs.push_back(rule.layout(request.input_shapes[0], {{R::batch, 0}, {R::out, 2}}));
  out.output = rule.layout(request.output_shape, {{R::batch, 0}, {R::out, 2}, {R::spatial, 1}});
  if (rule.splits(R::spatial))
    out.input_gradients.push_back(rule.layout(request.input_shapes[0], {{R::batch, 0}, {R::out, 2}}, {R::spatial}));
}

// The executor runs attention without dropout on its probabilities: no problem for one with it.
// Under context parallelism the problem is a block of the queries against every key; the dense
// products cost the same on every rank of the split, wherever its block lies (the causal mask
// drops scores after computing them), so the problem holds no position.
std::optional<KernelProblem> kernel_problem(const KernelProblemRequest& request) {
  const auto& attention = request.layer.attr<model::SelfAttentionAttrs>();
  const std::vector<int64_t>& x = request.local_input;
  const std::vector<int64_t> global = activation_shape(request.layer, request.micro_batch);
  const std::vector<int64_t> y = local_shape(request.layouts.output, request.mesh, global);
  if (attention.dropout > 0.0 || x.size() != 3 || y.size() != 3 || attention.heads <= 0) return std::nullopt;
  const int64_t head_dim = global.back() / attention.heads;
  if (head_dim <= 0 || y.back() % head_dim != 0) return std::nullopt;
  const int64_t local_heads = y.back() / head_dim;
  const int64_t group = attention.heads / attention.kv_head_count();  // query heads per kv head
  if (group <= 0 || local_heads % group != 0) return std::nullopt;
  AttentionProblem problem{x[0], x[1], local_heads, head_dim, attention.causal};
  if (y[1] != x[1]) problem.queries = y[1];
  if (group > 1) problem.kv_heads = local_heads / group;  // multi-head attention keeps 0
  problem.rope = attention.rope_theta > 0.0;
  problem.fused = attention.fused;
  return problem;
}

}  // namespace

const OpRules self_attention = {model::OpKind::self_attention, any_role_but_in, layouts, kernel_problem};

}  // namespace splitbrain::plans::op_rules_of
