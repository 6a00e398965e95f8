#pragma once
// The CUDA backend's compute: the shared ops (exec/ops) over a CudaKernelFactory on the CURRENT
// device (make_cuda_backend selects the rank's GPU before it calls this), one LayerOp per layer.

#include "exec/cuda/cuda_context.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops(Fp32Math math);

}  // namespace splitbrain::exec::cuda
