#include "exec/cuda/cuda_backend.h"

#include <memory>

#include "exec/cuda/cuda_array_device.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_layer_ops.h"
#include "exec/cuda/nccl_collectives.h"

namespace splitbrain::exec::cuda {

Backend make_cuda_backend(comm::MeshCommunicators& communicators, bool tf32, bool kernel_graphs) {
  const int device = select_device_for_this_rank();  // the engine's stream and buffers live on this device
  // One context for the kernels and the arrays: one compute stream orders them all.
  auto context = std::make_shared<CudaContext>(device, tf32 ? Fp32Math::tf32 : Fp32Math::exact,
                                               kernel_graphs ? KernelGraphs::replay : KernelGraphs::off);
  OpFactory ops = cuda_layer_ops(context);
  return {"cuda", tf32, std::move(ops), std::make_unique<NcclCollectives>(communicators),
          std::make_unique<CudaArrayDevice>(context)};
}

}  // namespace splitbrain::exec::cuda
