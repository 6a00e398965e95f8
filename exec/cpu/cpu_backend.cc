#include "exec/cpu/cpu_backend.h"

#include <memory>

#include "exec/comm/mpi_collectives.h"
#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/ops/layer_ops.h"
#include "exec/runtime/host_device.h"

namespace splitbrain::exec::cpu {

OpFactory cpu_layer_ops(int threads) { return ops::make_layer_ops(std::make_shared<CpuKernelFactory>(threads)); }

Backend make_cpu_backend(comm::MeshCommunicators& communicators, int threads) {
  return {"cpu", false, cpu_layer_ops(threads), std::make_unique<comm::MpiCollectives>(communicators),
          std::make_unique<HostDevice>()};
}

}  // namespace splitbrain::exec::cpu
