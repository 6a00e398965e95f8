#pragma once
// The CUDA backend's compute: the shared ops (exec/ops) over a CudaKernelFactory on `context`
// (its device, stream and memory pool, shared with the backend's CudaArrayDevice), one LayerOp
// per layer.

#include <memory>

#include "exec/cuda/cuda_context.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops(std::shared_ptr<CudaContext> context);

}  // namespace splitbrain::exec::cuda
