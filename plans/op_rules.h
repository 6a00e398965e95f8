#pragma once
// The sharding rules of one op kind, in one place: which roles it may split (structural, no
// sizes), and the layouts a choice of roles gives its tensors, with its parameters' shards and
// the communication inside it. Each kind's rules live in plans/op_rules/<op>.cc;
// plans/op_sharding.cc dispatches through op_rules() and never switches on the kind.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/dtype.h"
#include "model/op.h"
#include "plans/kernel_problem.h"
#include "plans/layer_sharding.h"
#include "plans/op_rules/rule_context.h"
#include "plans/op_sharding.h"

namespace splitbrain::plans {

// What a rule reads besides its RuleContext: global shapes, batch dimension first.
struct LayoutRequest {
  std::vector<int64_t> output_shape;
  RoleDims output_dims;
  std::vector<std::vector<int64_t>> input_shapes;
  model::DType dtype = model::DType::fp32;
  bool holds_tied_copy = false;  // a tied head on another stage than its table holds a copy
};

struct OpRules {
  model::OpKind kind;
  bool (*role_allowed)(ShardRole role);
  // Fills the inputs', output's and (where they differ from the inputs') input gradients'
  // layouts, the parameters' shards and the op's internal collectives. Throws PlanError through
  // `rule` when the roles do not fit the op or its shapes.
  void (*layouts)(const RuleContext& rule, const LayoutRequest& request, LayerLayouts& out);
  // The kernel a rank runs for the layer (plans/kernel_problem.h), or nullopt where it runs none
  // worth its own calibration; nullptr for ops that never have one.
  std::optional<KernelProblem> (*kernel_problem)(const KernelProblemRequest& request) = nullptr;
  // Per-token work that never splits the features (a norm, dropout, a residual add): what
  // Megatron-LM's sequence parallelism splits by position where tensor parallelism leaves it
  // whole (plans/sequence_parallel.h).
  bool per_token = false;
  // Why the roles role_allowed refuses are refused, where that is a limit of what is built
  // rather than of the op (moe: expert parallelism); added to the refusal's message.
  std::string_view refused_roles_reason = {};
};

// The rules of a kind; every kind has them.
const OpRules& op_rules(model::OpKind kind);

// The rules, one per kind, defined in plans/op_rules/.
namespace op_rules_of {
#define SPLITBRAIN_DECLARE_PLANS_OP_RULES(name) extern const OpRules name;
SPLITBRAIN_OP_KINDS(SPLITBRAIN_DECLARE_PLANS_OP_RULES)
#undef SPLITBRAIN_DECLARE_PLANS_OP_RULES
}  // namespace op_rules_of

}  // namespace splitbrain::plans
