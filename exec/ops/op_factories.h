#pragma once
// One factory per op kind, `make_<kind>_op`, in the file of its op family; layer_ops.cc's table
// of them is generated from model/op.h's list of kinds, so a kind without its factory fails to
// link. Each builds its op's kernels with the backend's KernelFactory.

#include <memory>

#include "exec/kernels/kernel_factory.h"
#include "exec/runtime/layer_op.h"
#include "model/op.h"

namespace splitbrain::exec::ops {

#define SPLITBRAIN_DECLARE_EXEC_OP_FACTORY(name) \
  std::unique_ptr<LayerOp> make_##name##_op(kernels::KernelFactory& factory, const OpContext& op);
SPLITBRAIN_OP_KINDS(SPLITBRAIN_DECLARE_EXEC_OP_FACTORY)
#undef SPLITBRAIN_DECLARE_EXEC_OP_FACTORY

}  // namespace splitbrain::exec::ops
