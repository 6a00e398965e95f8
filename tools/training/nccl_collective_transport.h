#pragma once
// The NCCL transport of calibrate's collectives (collective_transport.h), for `calibrate --backend
// cuda`: the collectives the CUDA backend runs on its arrays' device memory, with NCCL on buffers
// in this rank's GPU, queued on a stream of their own and finished with cudaStreamSynchronize, so a
// timed run is the host's time from the first call to the last result, as nccl-tests times it.
// Built only with the CUDA backend.

#include <memory>

#include "tools/training/collective_transport.h"

namespace splitbrain::tools {

// On this rank's GPU (exec::cuda::select_device_for_this_rank, collective over MPI_COMM_WORLD).
// One NCCL communicator per MPI communicator it is asked about, made on first use and destroyed
// with the transport.
std::unique_ptr<CollectiveTransport> make_nccl_collective_transport();

}  // namespace splitbrain::tools
