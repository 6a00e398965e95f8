#include "exec/runtime/host_device.h"

#include <memory>

#include "exec/runtime/host_array_link.h"
#include "exec/runtime/host_collectives.h"
#include "exec/runtime/host_kernels.h"
#include "exec/runtime/host_memory.h"

namespace splitbrain::exec {

HostDevice::HostDevice() : Device(concerns()) {}

Device::Concerns HostDevice::concerns() {
  return {.shared_state = nullptr,
          .memory = std::make_unique<HostMemory>(),
          .host_link = std::make_unique<HostArrayLink>(),
          .kernels = std::make_unique<HostKernels>(),
          .collectives = std::make_unique<HostCollectives>(),
          .clock = std::make_unique<DeviceClock>()};
}

}  // namespace splitbrain::exec
