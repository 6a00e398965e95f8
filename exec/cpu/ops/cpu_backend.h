#pragma once
// The CPU backend of the executor: one LayerOp per layer, computed with the oneDNN kernels of
// exec/cpu on this rank's local tensors.

#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cpu {

// `threads` oneDNN threads per rank (1 by default: one rank per core).
OpFactory cpu_backend(int threads = 1);

}  // namespace splitbrain::exec::cpu
