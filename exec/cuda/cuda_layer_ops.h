#pragma once
// The CUDA backend's compute: one LayerOp per layer on this rank's GPU (cuDNN, cuBLAS, own
// kernels). Its ops are not in this build yet: the function refuses with an InputError (exit
// code 2) naming that, until the CUDA kernels replace its definition in cuda_layer_ops.cc.

#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops();

}  // namespace splitbrain::exec::cuda
