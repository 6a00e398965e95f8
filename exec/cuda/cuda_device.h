#pragma once
// Which GPU a rank computes on. One GPU per rank: ranks on the same node (MPI_COMM_TYPE_SHARED)
// take devices by their local rank, round robin over the visible devices.

#include <string>

namespace splitbrain::exec::cuda {

// GPUs this process can see; 0 when there is none or no usable driver (never throws), so
// `splitbrain run` can pick its default backend on any machine.
int visible_device_count();

// Why a node with `ranks_on_node` ranks and `visible_devices` GPUs cannot give each rank its own
// GPU (NCCL refuses two ranks on one device), or "" when it can.
std::string device_shortage(int ranks_on_node, int visible_devices);

// Makes the local rank's GPU current (cudaSetDevice) and returns its index. Throws
// splitbrain::InputError (exit code 2) on every rank when any node sees no GPU or runs more
// ranks than it sees (device_shortage), and CudaError when the driver refuses the device.
// Collective over MPI_COMM_WORLD (it finds the local rank).
int select_device_for_this_rank();

// Bytes of `device`'s L2 cache, the last level its kernels read through.
double l2_cache_bytes(int device);

// The GPU model (cudaDeviceProp::name) of the current device.
std::string current_device_name();

}  // namespace splitbrain::exec::cuda
