#include "exec/cuda/cuda_backend.h"

#include <memory>

#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_layer_ops.h"
#include "exec/cuda/nccl_collectives.h"
#include "exec/runtime/host_device.h"

namespace splitbrain::exec::cuda {

Backend make_cuda_backend(comm::MeshCommunicators& communicators, bool tf32) {
  select_device_for_this_rank();  // the engine's stream and buffers live on this device
  OpFactory ops = cuda_layer_ops(tf32 ? Fp32Math::tf32 : Fp32Math::exact);
  // Arrays stay in host memory for now (HostDevice): the kernels copy them in and out.
  return {"cuda", tf32, std::move(ops), std::make_unique<NcclCollectives>(communicators), std::make_unique<HostDevice>()};
}

}  // namespace splitbrain::exec::cuda
