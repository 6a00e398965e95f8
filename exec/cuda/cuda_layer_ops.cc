#include "exec/cuda/cuda_layer_ops.h"

#include "model/errors.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops() { throw InputError("the CUDA backend's layer ops are not in this build yet"); }

}  // namespace splitbrain::exec::cuda
