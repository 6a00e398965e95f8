#include "plans/op_rules.h"

#include <array>
#include <stdexcept>

namespace splitbrain::plans {
namespace {

// Indexed by OpKind, in the order of the list in model/op.h.
constexpr std::array<const OpRules*, model::kOpKindCount> kRules = {
#define SPLITBRAIN_PLANS_OP_RULES_ADDRESS(name) &op_rules_of::name,
    SPLITBRAIN_OP_KINDS(SPLITBRAIN_PLANS_OP_RULES_ADDRESS)
#undef SPLITBRAIN_PLANS_OP_RULES_ADDRESS
};

}  // namespace

const OpRules& op_rules(model::OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  if (index >= kRules.size()) throw std::logic_error("OpKind out of range");
  const OpRules& rules = *kRules[index];
  if (rules.kind != kind) throw std::logic_error("the sharding rules of a kind name another kind");
  return rules;
}

}  // namespace splitbrain::plans
