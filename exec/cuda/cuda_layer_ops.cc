#include "exec/cuda/cuda_layer_ops.h"

#include <memory>
#include <utility>

#include "exec/cuda/cuda_kernel_factory.h"
#include "exec/ops/layer_ops.h"

namespace splitbrain::exec::cuda {

OpFactory cuda_layer_ops(std::shared_ptr<CudaContext> context) {
  return ops::make_layer_ops(std::make_shared<CudaKernelFactory>(std::move(context)));
}

}  // namespace splitbrain::exec::cuda
