#pragma once
// The ops every backend shares: one LayerOp per layer, holding the orchestration inside a layer
// (halo exchange, partial-sum bias, gradient accumulation over micro-batches, dropout masks by
// global index, loss scaling, batchnorm's statistics all-reduce, ...) and computing with the
// kernels of the backend's KernelFactory on this rank's local tensors.

#include <memory>

#include "exec/kernels/kernel_factory.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::ops {

// The ops keep the factory alive as long as the returned OpFactory or any op it made.
OpFactory make_layer_ops(std::shared_ptr<kernels::KernelFactory> factory);

}  // namespace splitbrain::exec::ops
