#pragma once
// What `calibrate --backend cuda` measures beside the kernel problems: the two costs of a GPU's
// step that no layer kernel has, timed through the backend's Device as the runtime calls it and
// by its clock (BackendKernels):
//   - the host link: HostLink::upload from pageable host memory, complete when it returns (the
//     input batch's way in; a step's loss goes back the same way), fitted as latency + bytes /
//     bandwidth -> Device::host_transfer_latency_seconds, host_to_device_bytes_per_second;
//   - the optimizer's update: DeviceKernels::update (SGD with momentum) over parameter arrays of several
//     sizes, fitted as a saturating rate of the bytes the simulator counts for it (parameters,
//     gradients and state, each read and written) -> memory_bandwidth_bytes_per_second and
//     memory_efficiency, the common memory curve that prices the update and the bucket copies;
//     and how many parameters the backend updates in one kernel -> optimizer_tensors_per_kernel;
//   - the host's time to queue one small kernel (an array allocated zero-filled, the clock's
//     mark) -> Device::launch_host_seconds, for the kernels the runtime queues beside a layer's.

#include "sim/cluster.h"
#include "tools/training/backend_choice.h"

namespace splitbrain::tools {

// Rank 0's measurements into `device`; prints each size's time when `print`.
void measure_device_rates(BackendKernels& kernels, bool print, sim::Device& device);

}  // namespace splitbrain::tools
