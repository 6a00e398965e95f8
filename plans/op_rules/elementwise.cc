// relu, gelu, dropout and add: inputs and output split alike by any role but a partial sum
// (none of them is linear in a way a partial input survives).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {

const OpRules relu = {model::OpKind::relu, any_role_but_in, same_layout_everywhere};
const OpRules gelu = {model::OpKind::gelu, any_role_but_in, same_layout_everywhere};
const OpRules dropout = {model::OpKind::dropout, any_role_but_in, same_layout_everywhere};
const OpRules add = {model::OpKind::add, any_role_but_in, same_layout_everywhere};

}  // namespace splitbrain::plans::op_rules_of
