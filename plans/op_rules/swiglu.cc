// swiglu: silu(gate) * up is elementwise, so any split but a partial sum applies to the gate, the
// up projection and the output alike, and no collective runs inside it.
//
// Not per-token in Megatron-LM's sense (OpRules::per_token): like gelu it sits between the MLP's
// column-parallel and row-parallel linears, where tensor parallelism splits its features, so
// sequence parallelism leaves it there instead of gathering its inputs onto a sequence split.

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {

// No kernel problem of its own: the simulator prices it as an elementwise pass by its unit.
const OpRules swiglu = {model::OpKind::swiglu, any_role_but_in, same_layout_everywhere, nullptr, false};

}  // namespace splitbrain::plans::op_rules_of
