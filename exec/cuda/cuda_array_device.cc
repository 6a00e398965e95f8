#include "exec/cuda/cuda_array_device.h"

#include <stdexcept>
#include <utility>

#include "exec/cuda/cuda_collectives.h"
#include "exec/cuda/cuda_device_clock.h"
#include "exec/cuda/cuda_host_link.h"
#include "exec/cuda/cuda_kernels.h"
#include "exec/cuda/cuda_memory.h"

namespace splitbrain::exec::cuda {
namespace {

// The memory concern first: it reads the driver's used bytes before the others allocate anything.
Device::Concerns cuda_concerns(const std::shared_ptr<CudaContext>& shared) {
  if (shared == nullptr) throw std::invalid_argument("CudaArrayDevice: no CudaContext");
  CudaContext& context = *shared;
  auto memory = std::make_unique<CudaMemory>(context);
  auto link = std::make_unique<CudaHostLink>(context);
  auto collectives = std::make_unique<CudaCollectives>(context, *memory, *link);
  return {.shared_state = shared,
          .memory = std::move(memory),
          .host_link = std::move(link),
          .kernels = std::make_unique<CudaKernels>(context),
          .collectives = std::move(collectives),
          .clock = std::make_unique<CudaDeviceClock>(shared)};
}

}  // namespace

// The context is checked before context_ refers to it: Device, the base, is made first.
CudaArrayDevice::CudaArrayDevice(const std::shared_ptr<CudaContext>& context)
    : Device(cuda_concerns(context)), context_(*context) {}

}  // namespace splitbrain::exec::cuda
