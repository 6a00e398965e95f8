#include "exec/cuda/cuda_layer_ops.h"

#include <memory>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cuda_kernel_factory.h"
#include "exec/ops/layer_ops.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops(Fp32Math math) {
  int device = 0;
  SB_CUDA_CHECK(cudaGetDevice(&device));
  return ops::make_layer_ops(std::make_shared<CudaKernelFactory>(std::make_shared<CudaContext>(device, math)));
}

}  // namespace splitbrain::exec::cuda
