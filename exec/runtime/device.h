#pragma once
// Device: what the runtime asks of a backend's memory, the one place where array values are
// read or written, by concern: its arrays and the copies between them (memory(),
// device_memory.h), its transfers to and from the host (host_link(), host_link.h), a layer's
// passes and the optimizer's update (kernels(), device_kernels.h), communication on its arrays
// (collectives(), device_collectives.h) and how its time is read (clock(), device_clock.h). The
// runtime (the step interpreter, the optimizer, ZeRO's slices, tied weights, checkpoints) holds
// DeviceArrays and asks the concern it needs.
//
// A Device is the five concern objects, owned, and nothing else: a backend implements each concern
// in a class of its own (HostDevice's in host_memory.h, host_array_link.h, host_kernels.h,
// host_collectives.h; CudaArrayDevice's in exec/cuda/) and composes them. What several concerns of
// one backend share (a GPU's context: its stream, allocator and counts) is one object they refer
// to, which the Device keeps alive until after them (Concerns::shared_state), so no concern owns
// another's state.

#include <memory>

#include "exec/runtime/device_clock.h"
#include "exec/runtime/device_collectives.h"
#include "exec/runtime/device_kernels.h"
#include "exec/runtime/device_memory.h"
#include "exec/runtime/host_link.h"

namespace splitbrain::exec {

class Device {
 public:
  // Every concern must be given (std::invalid_argument otherwise).
  struct Concerns {
    // Whatever the concerns below refer to and share; declared first so it goes last. May be null.
    std::shared_ptr<void> shared_state;
    std::unique_ptr<DeviceMemory> memory;
    std::unique_ptr<HostLink> host_link;
    std::unique_ptr<DeviceKernels> kernels;
    std::unique_ptr<DeviceCollectives> collectives;
    std::unique_ptr<DeviceClock> clock;
  };

  explicit Device(Concerns concerns);
  // Virtual so a backend's named device (HostDevice, CudaArrayDevice) can be held as a Device.
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceMemory& memory() { return *concerns_.memory; }
  const DeviceMemory& memory() const { return *concerns_.memory; }
  HostLink& host_link() { return *concerns_.host_link; }
  const HostLink& host_link() const { return *concerns_.host_link; }
  DeviceKernels& kernels() { return *concerns_.kernels; }
  const DeviceKernels& kernels() const { return *concerns_.kernels; }
  DeviceCollectives& collectives() { return *concerns_.collectives; }
  const DeviceCollectives& collectives() const { return *concerns_.collectives; }
  DeviceClock& clock() { return *concerns_.clock; }
  const DeviceClock& clock() const { return *concerns_.clock; }

 private:
  Concerns concerns_;
};

}  // namespace splitbrain::exec
