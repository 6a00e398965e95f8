#pragma once
// Device: what the runtime asks of a backend's memory, the one place where array values are
// read or written, by concern: its arrays and the copies between them (memory(),
// device_memory.h), its transfers to and from the host (host_link(), host_link.h), a layer's
// passes and the optimizer's update (kernels(), device_kernels.h), communication on its arrays
// (collectives(), device_collectives.h) and how its time is read (clock(), device_clock.h). The
// runtime (the step interpreter, the optimizer, ZeRO's slices, tied weights, checkpoints) holds
// DeviceArrays and asks the concern it needs; a backend keeps its arrays where it computes
// (HostDevice: host memory, host_device.h) and implements every concern.

#include "exec/runtime/device_clock.h"
#include "exec/runtime/device_collectives.h"
#include "exec/runtime/device_kernels.h"
#include "exec/runtime/device_memory.h"
#include "exec/runtime/host_link.h"

namespace splitbrain::exec {

class Device : public DeviceMemory,
               public HostLink,
               public DeviceKernels,
               public DeviceCollectives,
               public DeviceClock {
 public:
  ~Device() override = default;

  DeviceMemory& memory() { return *this; }
  const DeviceMemory& memory() const { return *this; }
  HostLink& host_link() { return *this; }
  const HostLink& host_link() const { return *this; }
  DeviceKernels& kernels() { return *this; }
  const DeviceKernels& kernels() const { return *this; }
  DeviceCollectives& collectives() { return *this; }
  DeviceClock& clock() { return *this; }
  const DeviceClock& clock() const { return *this; }
};

}  // namespace splitbrain::exec
