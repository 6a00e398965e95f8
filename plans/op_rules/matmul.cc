// matmul: batch only (every leading dimension is a batch of whole products).

#include "plans/op_rules.h"
#include "plans/op_rules/rule_context.h"

namespace splitbrain::plans::op_rules_of {

const OpRules matmul = {model::OpKind::matmul, batch_only, same_layout_everywhere};

}  // namespace splitbrain::plans::op_rules_of
