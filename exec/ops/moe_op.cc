// moe: planned and simulated, not run yet. The executor refuses a model holding one when it
// builds the layer's op, before the first step, naming the layer and the kind (exit code 2).

#include <fmt/format.h>

#include <memory>

#include "exec/ops/op_factories.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {

std::unique_ptr<LayerOp> make_moe_op(kernels::KernelFactory&, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  throw InputError(fmt::format("layer '{}': the executor cannot run {} layers yet (status table in README.md)",
                               layer.name, model::op_name(layer.kind)));
}

}  // namespace splitbrain::exec::ops
