#pragma once
// An NCCL communicator over the members of an MPI communicator, on each member's current device:
// member k of the NCCL communicator is rank k of `group`. Member 0 draws the unique id and
// broadcasts it over `group`, then every member calls ncclCommInitRank. Collective over `group`;
// the caller destroys what it returns (ncclCommDestroy). Used by the CUDA backend's engine
// (nccl_collectives.h) and by `calibrate --backend cuda`, so both time the same communicators.

#include <mpi.h>
#include <nccl.h>

namespace splitbrain::exec::cuda {

ncclComm_t nccl_communicator_over(MPI_Comm group);

}  // namespace splitbrain::exec::cuda
