#include "model/op.h"

#include <array>
#include <stdexcept>

#include "model/op_unit.h"

namespace splitbrain::model {
namespace {

// Indexed by OpKind: the list in op.h gives both the enum and this table, in the same order.
constexpr std::array<const OpUnit*, kOpKindCount> kUnits = {
#define SPLITBRAIN_MODEL_OP_UNIT_ADDRESS(name) &ops::name##_unit,
    SPLITBRAIN_OP_KINDS(SPLITBRAIN_MODEL_OP_UNIT_ADDRESS)
#undef SPLITBRAIN_MODEL_OP_UNIT_ADDRESS
};

constexpr std::array<OpKind, kOpKindCount> kKinds = {
#define SPLITBRAIN_OP_KIND_VALUE(name) OpKind::name,
    SPLITBRAIN_OP_KINDS(SPLITBRAIN_OP_KIND_VALUE)
#undef SPLITBRAIN_OP_KIND_VALUE
};

}  // namespace

const OpUnit& op_unit(OpKind kind) {
  const auto index = static_cast<size_t>(kind);
  if (index >= kUnits.size()) throw std::logic_error("OpKind out of range");
  const OpUnit& unit = *kUnits[index];
  if (unit.kind != kind) throw std::logic_error("the op unit of a kind names another kind");
  return unit;
}

std::string_view op_name(OpKind kind) { return op_unit(kind).name; }

std::optional<OpKind> op_kind_from_name(std::string_view name) {
  for (const OpUnit* unit : kUnits) {
    if (unit->name == name) return unit->kind;
  }
  return std::nullopt;
}

std::span<const OpKind> all_op_kinds() { return kKinds; }

std::pair<int, int> input_arity(OpKind kind) { return {op_unit(kind).min_inputs, op_unit(kind).max_inputs}; }

OpAttrs default_attrs(OpKind kind) { return op_unit(kind).default_attrs(); }

}  // namespace splitbrain::model
