#pragma once
// HostDevice: a Device (device.h) whose arrays live in host memory as HostArrays (host_array.h):
// the CPU backend's, and the host copies a GPU device stages communication through. Its concerns:
// HostMemory (host_memory.h), HostArrayLink (host_array_link.h), HostKernels (host_kernels.h:
// layers run their LayerOp on the arrays), HostCollectives (host_collectives.h: communication
// through comm::Communicator, the backend's collective engine and MPI messages) and the host's
// clock (DeviceClock's defaults). They share nothing.

#include "exec/runtime/device.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::exec {

class HostDevice : public Device {
 public:
  HostDevice();
  // The host concerns, for a device that replaces some of them (the tests' doubles).
  static Concerns concerns();
};

}  // namespace splitbrain::exec
