// batchnorm (batch, channels, height; its statistics summed over the split batch and height)
// and layernorm (batch, positions: it normalises the features, so no out).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {
namespace {

constexpr int64_t kStatisticBytes = 8;  // batchnorm statistics are summed in fp64 (E[x^2] - E[x]^2 cancels)

// Batchnorm over a split batch or height needs the statistics of all samples: two all-reduces
// of 2 fp64 values per local channel (sum and sum of squares forward; the two gradient sums
// backward).
void add_batchnorm_statistics(const RuleContext& rule, int64_t local_channels, LayerLayouts& out) {
  const std::vector<int> axes = rule.axes_of({ShardRole::batch, ShardRole::spatial});
  if (rule.mesh().group_size(axes) == 1) return;
  Collective statistics;
  statistics.kind = CollectiveKind::all_reduce;
  statistics.axes = axes;
  statistics.group_size = rule.mesh().group_size(axes);
  statistics.buffer_bytes = 2 * local_channels * kStatisticBytes;
  statistics.element_bytes = kStatisticBytes;
  out.forward_internal.push_back(statistics);
  // Backward sums are needed for the input gradient only (parameter gradients use local sums).
  if (rule.layer().needs_input_gradient) out.backward_internal.push_back(statistics);
}

void batchnorm_layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  same_layout_everywhere(rule, request, out);
  const int64_t channels = request.output_shape[static_cast<size_t>(request.output_dims.channel)];
  out.parameters.push_back(rule.parameter({channels}, {{ShardRole::out, 0}}));
  out.parameters.push_back(rule.parameter({channels}, {{ShardRole::out, 0}}));
  add_batchnorm_statistics(rule, channels / rule.ways(ShardRole::out), out);
}

void layernorm_layouts(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out) {
  same_layout_everywhere(rule, request, out);
  const int64_t features = request.output_shape.back();
  out.parameters.push_back(rule.parameter({features}, {}));
  out.parameters.push_back(rule.parameter({features}, {}));
}

std::optional<KernelProblem> layernorm_problem(const KernelProblemRequest& request) {
  return LayerNormProblem{rows_of(request.local_input), request.local_input.back()};
}

}  // namespace

const OpRules batchnorm = {model::OpKind::batchnorm, any_role_but_in, batchnorm_layouts};
const OpRules layernorm = {model::OpKind::layernorm, batch_or_spatial, layernorm_layouts, layernorm_problem, true};

}  // namespace splitbrain::plans::op_rules_of
