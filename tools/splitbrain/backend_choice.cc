#include "tools/splitbrain/backend_choice.h"

#include <fmt/format.h>

#include <memory>

#include "exec/cpu/cpu_backend.h"
#include "model/errors.h"
#if SPLITBRAIN_HAS_CUDA_BACKEND
#include "exec/cuda/cuda_backend.h"
#include "exec/cuda/cuda_device.h"
#endif

namespace splitbrain::tools {

std::string default_backend() {
#if SPLITBRAIN_HAS_CUDA_BACKEND
  if (exec::cuda::visible_device_count() > 0) return "cuda";
#endif
  return "cpu";
}

exec::Backend make_backend(const std::string& name, exec::comm::MeshCommunicators& communicators,
                           const BackendSettings& settings) {
  if (name == "cpu") {
    if (settings.tf32) {
      throw InputError(
          "--tf32: TF32 is a tensor-core mode of NVIDIA GPUs (--backend cuda); the cpu backend computes "
          "in plain fp32");
    }
    return exec::cpu::make_cpu_backend(communicators, settings.threads);
  }
  if (name == "cuda") {
#if SPLITBRAIN_HAS_CUDA_BACKEND
    return exec::cuda::make_cuda_backend(communicators, settings.tf32);
#else
    throw InputError("--backend cuda: this splitbrain was built without the CUDA backend (SPLITBRAIN_CUDA=OFF)");
#endif
  }
  throw InputError(fmt::format("--backend {}: no such backend (cpu, cuda)", name));
}

}  // namespace splitbrain::tools
