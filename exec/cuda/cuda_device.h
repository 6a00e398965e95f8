#pragma once
// Which GPU a rank computes on. One GPU per rank: ranks on the same node (MPI_COMM_TYPE_SHARED)
// take devices by their local rank, round robin over the visible devices.

namespace splitbrain::exec::cuda {

// GPUs this process can see; 0 when there is none or no usable driver (never throws), so
// `splitbrain run` can pick its default backend on any machine.
int visible_device_count();

// Makes the local rank's GPU current (cudaSetDevice) and returns its index. Throws
// splitbrain::InputError "no CUDA device ..." (exit code 2) when none is visible, and CudaError
// when the driver refuses the device. Collective over MPI_COMM_WORLD (it finds the local rank).
int select_device_for_this_rank();

}  // namespace splitbrain::exec::cuda
