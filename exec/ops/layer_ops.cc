#include "exec/ops/layer_ops.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "exec/ops/op_factories.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {
namespace {

using MakeOp = std::unique_ptr<LayerOp> (*)(kernels::KernelFactory&, const OpContext&);

// Indexed by OpKind, in the order of the list in model/op.h.
constexpr std::array<MakeOp, model::kOpKindCount> kMakeOp = {
#define SPLITBRAIN_EXEC_OP_FACTORY_ADDRESS(name) &make_##name##_op,
    SPLITBRAIN_OP_KINDS(SPLITBRAIN_EXEC_OP_FACTORY_ADDRESS)
#undef SPLITBRAIN_EXEC_OP_FACTORY_ADDRESS
};

}  // namespace

// The data enters through the runtime's batch source, never through an op.
std::unique_ptr<LayerOp> make_input_op(kernels::KernelFactory&, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  throw InputError(fmt::format("layer '{}': the executor cannot run {} layers yet (status table in README.md)",
                               layer.name, model::op_name(layer.kind)));
}

OpFactory make_layer_ops(std::shared_ptr<kernels::KernelFactory> factory) {
  return [shared = std::move(factory)](const OpContext& op) -> std::unique_ptr<LayerOp> {
    const model::Layer& layer = op.model->layer(op.layer);
    return kMakeOp.at(static_cast<size_t>(layer.kind))(*shared, op);
  };
}

}  // namespace splitbrain::exec::ops
